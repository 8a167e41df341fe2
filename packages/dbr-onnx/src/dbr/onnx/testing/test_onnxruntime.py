"""Run an exported test case (``model.onnx`` and ``test_data_set_N``) with ONNX Runtime."""

import glob
import os

import numpy

import onnx
from onnx import numpy_helper


def load_test_data(data_dir, input_names, output_names):
    """The inputs and outputs of one test data set, as two dicts from ONNX name to array.

    A tensor whose name is among the names given keeps it; an unnamed one takes
    the next name not yet used, in file order (``input_0.pb``, ``input_1.pb``, ...).
    """
    loaded = []
    for kind, names in (("input", input_names), ("output", output_names)):
        names = list(names)
        values = {}
        for path in sorted(glob.glob(os.path.join(data_dir, f"{kind}_*.pb"))):
            tensor = onnx.load_tensor(path)
            if tensor.name in names:
                name = tensor.name
                names.remove(name)
            else:
                name = names.pop(0)
            values[name] = numpy_helper.to_array(tensor)
        loaded.append(values)
    return tuple(loaded)


def check_model_expect(test_path, input_names=None, rtol=1e-5, atol=1e-5):
    """Run ``test_path/model.onnx`` on each data set and compare with the outputs written.

    Args:
        test_path (str): a folder written by :func:`dbr.onnx.export_testcase`.
        input_names (list of str): when given, the graph's inputs (other than
            initializers) must be exactly these.
        rtol, atol (float): tolerances of the comparison.

    Raises:
        ImportError: onnxruntime is not installed.
        AssertionError: the inputs or an output differ.
    """
    try:
        import onnxruntime
    except ImportError as e:
        raise ImportError(
            "check_model_expect: onnxruntime is needed to run exported models: "
            "pip install 'dbr-onnx[runtime]'"
        ) from e
    with open(os.path.join(test_path, "model.onnx"), "rb") as f:
        model = onnx.load_model(f)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    rt_input_names = [value.name for value in session.get_inputs()]
    rt_output_names = [value.name for value in session.get_outputs()]
    if input_names is not None:
        assert sorted(input_names) == sorted(rt_input_names), (
            f"check_model_expect: the graph's inputs are {sorted(rt_input_names)}, "
            f"expected {sorted(input_names)}"
        )
    data_sets = sorted(p for p in os.listdir(test_path) if p.startswith("test_data_set_"))
    for data_set in data_sets:
        data_path = os.path.join(test_path, data_set)
        assert os.path.isdir(data_path), f"check_model_expect: {data_path} is not a folder"
        inputs, outputs = load_test_data(data_path, rt_input_names, rt_output_names)
        results = session.run(list(outputs), inputs)
        for (name, expected), actual in zip(outputs.items(), results):
            numpy.testing.assert_allclose(
                expected, actual, rtol=rtol, atol=atol, err_msg=f"output {name!r}"
            )
