"""Write a model's export test case under ``out/opset<N>/<name>``."""

import os

TEST_OUT_DIR = "out"


def gen_test_data_set(model, args, name, opset_version, **kwargs):
    """Export ``model`` on ``args`` with :func:`dbr.onnx.export_testcase` for one opset.

    The array module's random generator is seeded with 42 first, so that a
    model drawing random numbers (dropout in training mode) writes the same
    test case each time.

    Args:
        model: the model, as :func:`dbr.onnx.export` takes it.
        args: its example inputs.
        name (str): the folder of the test case under ``out/opset<opset_version>``.
        opset_version (int): the opset to export.
        **kwargs: the other arguments of :func:`dbr.onnx.export_testcase`.

    Returns:
        str: the test case's folder.
    """
    from dbr.onnx.export_testcase import export_testcase

    xp = getattr(model, "xp", None)
    if xp is not None:
        xp.random.seed(42)
    test_path = os.path.join(TEST_OUT_DIR, f"opset{opset_version}", name)
    export_testcase(model, args, test_path, opset_version=opset_version, **kwargs)
    return test_path
