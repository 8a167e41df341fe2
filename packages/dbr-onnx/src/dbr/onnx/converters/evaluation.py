"""Converters of the evaluation functions (accuracy, binary_accuracy)."""

import numpy

from dbr.onnx.converters._util import Chain, reduce
from onnx import helper


def _as(c, x, dtype):
    return c.op("Cast", [x], to=helper.np_dtype_to_tensor_dtype(numpy.dtype(dtype)))


def _accuracy(p):
    """The fraction of rows whose argmax over axis 1 is the label (ignored labels left out)."""
    c = Chain(p)
    y, t = p.input_names
    y_arr, t_arr = p.input_arrays
    if t_arr.size == 0:
        c.op("Identity", [c.const(0, y_arr.dtype, "zero")], p.output_names)
        return c.nodes
    guess = c.op("ArgMax", [y], axis=1, keepdims=0)
    guess = c.op("Reshape", [_as(c, guess, t_arr.dtype), c.const(t_arr.shape)])
    correct = c.op("Equal", [guess, t])
    if p.func.ignore_label is None:
        total = c.const(t_arr.size, y_arr.dtype, "total")
    else:
        valid = c.op("Not", [c.op("Equal", [t, c.const(p.func.ignore_label, t_arr.dtype)])])
        correct = c.op("And", [correct, valid])
        total = reduce(c, "ReduceSum", _as(c, valid, y_arr.dtype), None, False)
        total = c.op("Max", [total, c.const(1, y_arr.dtype)])
    hits = reduce(c, "ReduceSum", _as(c, correct, y_arr.dtype), None, False)
    c.op("Div", [hits, total], p.output_names)
    return c.nodes


def _binary_accuracy(p):
    """The fraction of ``(y >= 0) == t`` over the labels that are not -1."""
    c = Chain(p)
    y, t = p.input_names
    y_arr, t_arr = p.input_arrays
    guess = _as(c, c.op("Not", [c.op("Less", [y, c.const(0, y_arr.dtype)])]), t_arr.dtype)
    hits = reduce(c, "ReduceSum", _as(c, c.op("Equal", [guess, t]), y_arr.dtype), None, False)
    valid = c.op("Not", [c.op("Equal", [t, c.const(-1, t_arr.dtype)])])
    total = reduce(c, "ReduceSum", _as(c, valid, y_arr.dtype), None, False)
    c.op("Div", [hits, c.op("Max", [total, c.const(1, y_arr.dtype)])], p.output_names)
    return c.nodes


CONVERTERS = {
    "Accuracy": _accuracy,
    "BinaryAccuracy": _binary_accuracy,
}
