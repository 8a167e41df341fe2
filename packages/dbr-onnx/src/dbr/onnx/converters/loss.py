"""Converters of the losses."""

import numpy

from dbr.onnx.converters._util import Chain, pick_per_row, reduce


def _softmax_cross_entropy(p):
    c = Chain(p)
    f = p.func
    x_arr, t_arr = p.input_arrays
    if f.class_weight is not None or t_arr.dtype.kind not in "iu" or x_arr.ndim != 2:
        raise ValueError(
            "dbr.onnx: SoftmaxCrossEntropy converts integer labels of 2-D scores without "
            f"class_weight, got scores of shape {x_arr.shape}, labels of dtype {t_arr.dtype}"
            f"{' and class_weight' if f.class_weight is not None else ''}"
        )
    x, t = p.input_names
    dtype = x_arr.dtype
    log_p = c.op("LogSoftmax", [x], axis=1)
    ignore = c.const(f.ignore_label, t_arr.dtype)
    valid = c.op("Not", [c.op("Equal", [t, ignore])])
    safe_t = c.op("Where", [valid, t, c.const(0, t_arr.dtype)])
    picked = pick_per_row(c, log_p, c.op("Cast", [safe_t], to=7), x_arr.shape)
    weight = c.op("Cast", [valid], to=_onnx_type(dtype))
    loss = c.op("Neg", [c.op("Mul", [picked, weight])])
    if f.reduce == "no":
        c.op("Identity", [loss], p.output_names)
        return c.nodes
    total = reduce(c, "ReduceSum", loss, None, False)
    if f.normalize:
        count = reduce(c, "ReduceSum", weight, None, False)
        count = c.op("Max", [count, c.const(1, dtype)])
    else:
        count = c.const(x_arr.shape[0], dtype)
    c.op("Div", [total, count], p.output_names)
    return c.nodes


def _onnx_type(dtype):
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(numpy.dtype(dtype))


def _stable_softplus(c, x):
    """``log(1 + exp(x))`` as ``log(1 + exp(-|x|)) + max(x, 0)``, which cannot overflow."""
    tail = c.op("Exp", [c.op("Neg", [c.op("Abs", [x])])])
    return c.op("Add", [c.op("Log", [c.op("Add", [tail, c.scalar(1)])]), c.op("Relu", [x])])


def _finish(c, p, loss, reduce):
    """``loss`` summed (``'sum'``), averaged (``'mean'``) or as it is, into the output."""
    if reduce == "sum":
        reduce_all(c, "ReduceSum", loss, p.output_names[0])
    elif reduce == "mean":
        reduce_all(c, "ReduceMean", loss, p.output_names[0])
    else:
        c.op("Identity", [loss], p.output_names)
    return c.nodes


def reduce_all(c, op_type, x, output):
    """A Reduce* of ``x`` over every axis to a 0-d ``output``."""
    return reduce(c, op_type, x, None, False, output)


def _difference(c, p, square):
    diff = c.op("Sub", p.input_names[:2])
    return c.op("Mul", [diff, diff]) if square else c.op("Abs", [diff])


def _difference_loss(square, reduce_op=None):
    def convert(p):
        c = Chain(p)
        loss = _difference(c, p, square)
        if reduce_op is None:
            c.op("Identity", [loss], p.output_names)
        else:
            reduce_all(c, reduce_op, loss, p.output_names[0])
        return c.nodes

    return convert


def _per_row_mean(c, p, loss, n_rows):
    """The sum of ``loss`` divided by the (static) number of rows, into the output."""
    total = reduce_all(c, "ReduceSum", loss, None)
    c.op("Div", [total, c.scalar(max(n_rows, 1))], p.output_names)
    return c.nodes


def _per_row_or_mean(c, p, loss, n_rows):
    """``loss`` averaged over the rows when ``reduce`` is ``'mean'``, else as it is."""
    if p.func.reduce == "mean":
        return _per_row_mean(c, p, loss, n_rows)
    c.op("Identity", [loss], p.output_names)
    return c.nodes


def _sigmoid_cross_entropy(p):
    c = Chain(p)
    f = p.func
    x, t = p.input_names
    x_arr, t_arr = p.input_arrays
    valid = c.op("Not", [c.op("Equal", [t, c.const(-1, t_arr.dtype)])])
    weight = c.op("Cast", [valid], to=_onnx_type(x_arr.dtype))
    labels = c.op("Cast", [c.op("Where", [valid, t, c.const(0, t_arr.dtype)])],
                  to=_onnx_type(x_arr.dtype))  # fmt: skip
    loss = c.op("Sub", [_stable_softplus(c, x), c.op("Mul", [x, labels])])
    loss = c.op("Mul", [loss, weight])
    if f.reduce == "no":
        c.op("Identity", [loss], p.output_names)
        return c.nodes
    if not f.normalize:
        return _per_row_mean(c, p, loss, x_arr.shape[0] if x_arr.ndim else 1)
    count = c.op("Max", [reduce_all(c, "ReduceSum", weight, None), c.scalar(1)])
    c.op("Div", [reduce_all(c, "ReduceSum", loss, None), count], p.output_names)
    return c.nodes


def _huber_loss(p):
    c = Chain(p)
    size = c.op("Abs", [c.op("Sub", p.input_names)])
    inner = c.op("Min", [size, c.scalar(p.func.delta)])
    # With m = min(|d|, delta): m * (|d| - m / 2).
    loss = c.op("Mul", [inner, c.op("Sub", [size, c.op("Mul", [inner, c.scalar(0.5)])])])
    if p.func.reduce == "sum_along_second_axis":
        reduce(c, "ReduceSum", loss, [1], False, p.output_names[0])
    else:
        c.op("Identity", [loss], p.output_names)
    return c.nodes


def _hinge(p):
    c = Chain(p)
    x, t = p.input_names
    x_arr, t_arr = p.input_arrays
    n, k = x_arr.shape
    classes = c.const(numpy.arange(k), t_arr.dtype, "classes")
    is_label = c.op("Equal", [c.op("Unsqueeze", [t, c.const([1])]), classes])
    signed = c.op("Where", [is_label, c.op("Neg", [x]), x])
    loss = c.op("Relu", [c.op("Add", [signed, c.scalar(1)])])
    if p.func.norm == "L2":
        loss = c.op("Mul", [loss, loss])
    return _per_row_or_mean(c, p, loss, n)


def _bernoulli_nll(p):
    c = Chain(p)
    x, y = p.input_names
    loss = c.op("Sub", [_stable_softplus(c, y), c.op("Mul", [x, y])])
    return _finish(c, p, loss, p.func.reduce)


def _gaussian_kl_divergence(p):
    c = Chain(p)
    mean, ln_var = p.input_names
    loss = c.op("Sub", [c.op("Exp", [ln_var]), ln_var])
    loss = c.op("Add", [loss, c.op("Mul", [mean, mean])])
    loss = c.op("Mul", [c.op("Sub", [loss, c.scalar(1)]), c.scalar(0.5)])
    return _finish(c, p, loss, p.func.reduce)


def _gaussian_nll(p):
    c = Chain(p)
    x, mean, ln_var = p.input_names
    diff = c.op("Sub", [x, mean])
    loss = c.op("Mul", [c.op("Mul", [diff, diff]), c.op("Exp", [c.op("Neg", [ln_var])])])
    loss = c.op("Add", [c.op("Add", [loss, ln_var]), c.scalar(numpy.log(2 * numpy.pi))])
    return _finish(c, p, c.op("Mul", [loss, c.scalar(0.5)]), p.func.reduce)


def _contrastive(p):
    c = Chain(p)
    x0, x1, y = p.input_names
    n = p.input_arrays[0].shape[0]
    diff = c.op("Sub", [x0, x1])
    dist_sq = reduce(c, "ReduceSum", c.op("Mul", [diff, diff]), [1], False)
    short = c.op("Relu", [c.op("Sub", [c.scalar(p.func.margin), c.op("Sqrt", [dist_sq])])])
    similar = c.op("Cast", [y], to=_onnx_type(p.input_arrays[0].dtype))
    loss = c.op("Add", [
        c.op("Mul", [similar, dist_sq]),
        c.op("Mul", [c.op("Sub", [c.scalar(1), similar]), c.op("Mul", [short, short])]),
    ])  # fmt: skip
    loss = c.op("Mul", [loss, c.scalar(0.5)])
    return _per_row_or_mean(c, p, loss, n)


def _triplet(p):
    c = Chain(p)
    anchor, positive, negative = p.input_names
    n = p.input_arrays[0].shape[0]
    # |a - p|**2 - |a - n|**2 == sum((n - p) * (2a - p - n))
    w = c.op("Sub", [c.op("Sub", [c.op("Add", [anchor, anchor]), positive]), negative])
    w = c.op("Mul", [w, c.op("Sub", [negative, positive])])
    dist = reduce(c, "ReduceSum", w, [1], False)
    loss = c.op("Relu", [c.op("Add", [dist, c.scalar(p.func.margin)])])
    return _per_row_or_mean(c, p, loss, n)


def _covariance(c, p, a, b, n):
    """``(a - mean(a))^T (b - mean(b)) / n`` over the rows."""
    centered = [c.op("Sub", [v, reduce(c, "ReduceMean", v, [0], True)]) for v in (a, b)]
    product = c.op("MatMul", [c.op("Transpose", [centered[0]], perm=[1, 0]), centered[1]])
    return c.op("Div", [product, c.scalar(n)])


def _half_squared_sum(c, p, covariance):
    if p.func.reduce == "no":
        c.op("Identity", [covariance], p.output_names)
        return c.nodes
    total = reduce_all(c, "ReduceSum", c.op("Mul", [covariance, covariance]), None)
    c.op("Mul", [total, c.scalar(0.5)], p.output_names)
    return c.nodes


def _cross_covariance(p):
    c = Chain(p)
    y, z = p.input_names
    return _half_squared_sum(c, p, _covariance(c, p, y, z, p.input_arrays[0].shape[0]))


def _decov(p):
    c = Chain(p)
    h = p.input_names[0]
    n, m = p.input_arrays[0].shape
    covariance = _covariance(c, p, h, h, n)
    off_diagonal = 1 - numpy.eye(m, dtype=p.input_arrays[0].dtype)
    covariance = c.op("Mul", [covariance, c.const(off_diagonal, off_diagonal.dtype, "mask")])
    return _half_squared_sum(c, p, covariance)


CONVERTERS = {
    "SoftmaxCrossEntropy": _softmax_cross_entropy,
    "MeanSquaredError": _difference_loss(True, "ReduceMean"),
    "SquaredError": _difference_loss(True),
    "SquaredDifference": _difference_loss(True),
    "AbsoluteError": _difference_loss(False),
    "MeanAbsoluteError": _difference_loss(False, "ReduceMean"),
    "SigmoidCrossEntropy": _sigmoid_cross_entropy,
    "HuberLoss": _huber_loss,
    "Hinge": _hinge,
    "BernoulliNLL": _bernoulli_nll,
    "GaussianKLDivergence": _gaussian_kl_divergence,
    "GaussianNLL": _gaussian_nll,
    "Contrastive": _contrastive,
    "Triplet": _triplet,
    "CrossCovariance": _cross_covariance,
    "DeCov": _decov,
}
