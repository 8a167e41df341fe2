"""export_testcase: a model with one input/output pair in ONNX's backend-test layout."""

import os
import shutil

from dbr.onnx._graph import to_numpy
from dbr.onnx.export import _atomic_write, _write, export
from dbr.onnx.onnx_helper import cleanse_param_name
from onnx import numpy_helper


def export_testcase(model, args, out_dir, output_grad=False, **kwargs):
    """Export ``model`` to ``out_dir/model.onnx`` with its inputs and outputs as test data.

    Writes ``out_dir/test_data_set_0/input_N.pb`` and ``output_N.pb`` (one
    TensorProto each, named as in the graph), the layout ONNX's backend tests
    and ``onnx_test_runner`` read. With ``output_grad``, the gradients of the
    parameters after a backward from the outputs (seeded with ones) are also
    written, as ``gradient_N.pb`` named as the parameters' initializers
    (``param_l1_W`` for ``/l1/W``).

    Args:
        model: the model, as :func:`dbr.onnx.export` takes it.
        args: its example inputs, as :func:`dbr.onnx.export` takes them.
        out_dir (str): the folder to write (created if needed).
        output_grad (bool): also write the parameters' gradients.
        **kwargs: the other arguments of :func:`dbr.onnx.export`.

    Returns:
        onnx.ModelProto: the exported model.

    Raises:
        OSError: a file cannot be written; the folders this call created are
            removed again (a failed export creates none).
    """
    for key in ("filename", "return_named_inout"):
        if key in kwargs:
            raise TypeError(f"export_testcase: {key} is set by export_testcase itself")
    save_text = kwargs.pop("save_text", False)
    if output_grad and hasattr(model, "cleargrads"):
        model.cleargrads()
    proto, inputs, outputs = export(model, args, return_named_inout=True, **kwargs)
    tensors = []
    for prefix, named in (("input", inputs), ("output", outputs)):
        for i, (name, var) in enumerate(named.items()):
            tensors.append((f"{prefix}_{i}.pb", name, var.array))
    if output_grad:
        from dbr.core import backward

        outs = list(outputs.values())
        backward(outs, [out.xp.ones_like(out.array) for out in outs])
        for i, (path, param) in enumerate(model.namedparams()):
            if param.grad is not None:
                tensors.append((f"gradient_{i}.pb", cleanse_param_name(path), param.grad))

    out_dir = os.fspath(out_dir)
    data_dir = os.path.join(out_dir, "test_data_set_0")
    created = _outermost_missing(data_dir)
    try:
        os.makedirs(data_dir, exist_ok=True)
        _write(proto, os.path.join(out_dir, "model.onnx"), save_text)
        for filename, name, array in tensors:
            _write_tensor(os.path.join(data_dir, filename), name, array)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    return proto


def _outermost_missing(path):
    """The outermost folder on ``path`` that does not exist yet, or None."""
    path = os.path.abspath(path)
    missing = None
    while not os.path.exists(path):
        missing, path = path, os.path.dirname(path)
    return missing


def _write_tensor(path, name, array):
    tensor = numpy_helper.from_array(to_numpy(array), name)
    _atomic_write(path, tensor.SerializeToString(), "export_testcase")
