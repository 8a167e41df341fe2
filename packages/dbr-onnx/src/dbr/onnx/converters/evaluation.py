"""Converters of the evaluation functions (accuracy, binary_accuracy, r2_score,
classification_summary)."""

import numpy

from dbr.core.utils import accumulation_dtype
from dbr.onnx.converters._util import Chain, reduce, require_opset
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


def _r2_score(p):
    """``1 - ss_res / ss_tot`` per column (0 where the target is constant), averaged or not."""
    require_opset(p, 11, "Equal of floating-point values")
    c = Chain(p)
    pred_arr, true_arr = p.input_arrays
    dtype = accumulation_dtype(pred_arr.dtype, true_arr.dtype)
    pred, true = (
        name if arr.dtype == dtype else _as(c, name, dtype)
        for name, arr in zip(p.input_names, p.input_arrays)
    )
    residual = c.op("Sub", [pred, true])
    ss_res = reduce(c, "ReduceSum", c.op("Mul", [residual, residual]), [0], False)
    n = c.const(max(true_arr.shape[0], 1), dtype, "n")
    centered = c.op("Sub", [true, c.op("Div", [reduce(c, "ReduceSum", true, [0], False), n])])
    ss_tot = reduce(c, "ReduceSum", c.op("Mul", [centered, centered]), [0], False)
    zero, one = c.const(0, dtype, "zero"), c.const(1, dtype, "one")
    constant = c.op("Equal", [ss_tot, zero])
    ratio = c.op("Div", [ss_res, c.op("Where", [constant, one, ss_tot])])
    r2 = c.op("Where", [constant, zero, c.op("Sub", [one, ratio])])
    if p.func.multioutput == "uniform_average":
        r2 = reduce(c, "ReduceMean", r2, None, False)
    if dtype != p.output_dtypes[0]:
        r2 = _as(c, r2, p.output_dtypes[0])
    c.op("Identity", [r2], p.output_names)
    return c.nodes


def _is_folded(p, name):
    """Whether the input ``name`` is a constant folded into the graph (not computed in it)."""
    return any(t.name == name for t in p.context.initializers)


def _classification_summary(p):
    """Per-class counts by comparing the labels with every class (Equal, ReduceSum).

    Ignored samples count in an extra class that is left out, as in dbr's forward; the
    quantities are float64 and the support int64.
    """
    c = Chain(p)
    f = p.func
    y, t = p.input_names
    t_arr = p.input_arrays[1]
    label_num = p.output_shapes[3][0]
    if f.label_num is None and not _is_folded(p, t):
        raise ValueError(
            f"dbr.onnx: ClassificationSummary ({f._who}) exports with label_num given when t "
            f"is computed in the graph (else the number of classes is max(t) + 1, a "
            f"data-dependent shape); got label_num=None for t of shape {t_arr.shape}"
        )
    int64 = numpy.int64
    labels = c.op("Reshape", [_as(c, t, int64), c.const([-1])])
    guess = c.op("Reshape", [c.op("ArgMax", [y], axis=1, keepdims=0), c.const([-1])])
    extra = c.const(label_num, int64, "extra_class")
    ignored = c.op("Equal", [labels, c.const(f.ignore_label, int64, "ignore_label")])
    true = c.op("Where", [ignored, extra, labels])
    pred = c.op("Where", [ignored, extra, guess])
    hit = c.op("Where", [c.op("Equal", [pred, true]), true, extra])
    classes = c.const(numpy.arange(label_num), int64, "classes")

    def count(labels, output=None):
        one_hot = c.op("Equal", [c.op("Unsqueeze", [labels, c.const([1])]), classes])
        return reduce(c, "ReduceSum", _as(c, one_hot, int64), [0], False, output)

    support = count(true, p.output_names[3])
    relevant = _as(c, count(pred), numpy.float64)
    tp = _as(c, count(hit), numpy.float64)
    precision = c.op("Div", [tp, relevant], [p.output_names[0]])
    recall = c.op("Div", [tp, _as(c, support, numpy.float64)], [p.output_names[1]])
    beta2 = f.beta * f.beta
    weighted = c.op("Mul", [c.const(1 + beta2, numpy.float64, "one_plus_beta2"), precision])
    numerator = c.op("Mul", [weighted, recall])
    denominator = c.op(
        "Add", [c.op("Mul", [c.const(beta2, numpy.float64, "beta2"), precision]), recall]
    )
    c.op("Div", [numerator, denominator], [p.output_names[2]])
    return c.nodes


CONVERTERS = {
    "Accuracy": _accuracy,
    "BinaryAccuracy": _binary_accuracy,
    "R2Score": _r2_score,
    "ClassificationSummary": _classification_summary,
}
