"""Converters of the noise functions (present in the graph only when exported with train=True)."""

import numpy

from dbr.onnx.converters._util import Chain


def _dropout(p):
    c = Chain(p)
    ratio = c.const(p.func.ratio, p.input_arrays[0].dtype, "ratio")
    training = c.const(True, numpy.bool_, "training_mode")
    c.op("Dropout", [p.input_names[0], ratio, training], [p.output_names[0]])
    return c.nodes


CONVERTERS = {
    "Dropout": _dropout,
}
