"""Converters of the noise functions (present in the graph only when exported with train=True)."""

import numpy

from dbr.onnx._graph import to_numpy
from dbr.onnx.converters._util import Chain


def _dropout(p):
    c = Chain(p)
    ratio = c.const(p.func.ratio, p.input_arrays[0].dtype, "ratio")
    training = c.const(True, numpy.bool_, "training_mode")
    c.op("Dropout", [p.input_names[0], ratio, training], [p.output_names[0]])
    return c.nodes


def _simplified_dropconnect(p):
    """SimplifiedDropconnect in test mode (``ratio`` 0): a linear layer, its weight times
    the mask when one was given; with ``ratio > 0`` the mask is drawn at random per call."""
    c = Chain(p)
    f = p.func
    if f.ratio:
        raise ValueError(
            f"dbr.onnx: SimplifiedDropconnect exports in test mode (train=False) only; got "
            f"ratio={f.ratio}, whose mask is drawn at random on every call"
        )
    x, w = p.input_names[:2]
    mask = numpy.asarray(to_numpy(f.mask))
    dtype = p.input_arrays[1].dtype
    n, in_size = p.input_arrays[0].shape[0], p.input_arrays[1].shape[1]
    x = c.op("Reshape", [x, c.const([-1, in_size])])
    if mask.all():
        y = c.op("MatMul", [x, c.op("Transpose", [w], perm=[1, 0])])
    elif mask.ndim == 2:
        w = c.op("Mul", [w, c.const(mask, dtype, "mask")])
        y = c.op("MatMul", [x, c.op("Transpose", [w], perm=[1, 0])])
    else:  # one mask per sample: (n, 1, in) @ (n, in, out)
        w = c.op("Mul", [w, c.const(mask, dtype, "mask")])
        rows = c.op("Unsqueeze", [x, c.const([1])])
        y = c.op("MatMul", [rows, c.op("Transpose", [w], perm=[0, 2, 1])])
        y = c.op("Reshape", [y, c.const([n, -1])])
    if len(p.input_names) == 3:
        c.op("Add", [y, p.input_names[2]], p.output_names)
    else:
        c.op("Identity", [y], p.output_names)
    return c.nodes


CONVERTERS = {
    "Dropout": _dropout,
    "SimplifiedDropconnect": _simplified_dropconnect,
}
