"""Converters of arithmetic, elementwise math, reductions and matrix products."""

import numpy

from dbr.onnx.converters._util import Chain, normalize_axes, reduce
from onnx import helper


def _same(op_type):
    def convert(p):
        c = Chain(p)
        c.op(op_type, p.input_names, p.output_names)
        return c.nodes

    return convert


def _value(p):
    """The function's constant operand, in the dtype of its variable input."""
    return numpy.asarray(p.func.value, dtype=p.input_arrays[0].dtype)


def _with_constant(op_type, constant_first=False):
    def convert(p):
        c = Chain(p)
        value = c.p.context.add_const(_value(p), "value")
        x = p.input_names[0]
        c.op(op_type, [value, x] if constant_first else [x, value], p.output_names)
        return c.nodes

    return convert


def _multi_add(p):
    c = Chain(p)
    c.op("Sum", p.input_names, p.output_names)
    return c.nodes


def _square(p):
    c = Chain(p)
    x = p.input_names[0]
    c.op("Mul", [x, x], p.output_names)
    return c.nodes


def _rsqrt(p):
    c = Chain(p)
    c.op("Reciprocal", [c.op("Sqrt", p.input_names)], p.output_names)
    return c.nodes


def _log1p(p):
    c = Chain(p)
    c.op("Log", [c.op("Add", [p.input_names[0], c.scalar(1)])], p.output_names)
    return c.nodes


def _expm1(p):
    c = Chain(p)
    c.op("Sub", [c.op("Exp", p.input_names), c.scalar(1)], p.output_names)
    return c.nodes


def _log_base(base):
    def convert(p):
        c = Chain(p)
        c.op("Div", [c.op("Log", p.input_names), c.scalar(numpy.log(base))], p.output_names)
        return c.nodes

    return convert


def _arctanh(p):
    c = Chain(p)
    c.op("Atanh", p.input_names, p.output_names)
    return c.nodes


def _swap_last(c, x, ndim):
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return c.op("Transpose", [x], perm=perm)


def _matmul(p):
    c = Chain(p)
    a, b = p.input_names
    if p.func.transa and p.input_arrays[0].ndim >= 2:
        a = _swap_last(c, a, p.input_arrays[0].ndim)
    if p.func.transb and p.input_arrays[1].ndim >= 2:
        b = _swap_last(c, b, p.input_arrays[1].ndim)
    c.op("MatMul", [a, b], p.output_names)
    return c.nodes


def _batch_matmul(p):
    c = Chain(p)
    a, b = p.input_names
    shapes = [x.shape for x in p.input_arrays]
    # batch_matmul treats a 2-D operand as a batch of column vectors.
    if len(shapes[0]) == 2:
        a = c.op("Unsqueeze", [a, c.const([2])])
    if len(shapes[1]) == 2:
        b = c.op("Unsqueeze", [b, c.const([2])])
    if p.func.transa:
        a = _swap_last(c, a, 3)
    if p.func.transb:
        b = _swap_last(c, b, 3)
    y = c.op("MatMul", [a, b])
    c.op("Reshape", [y, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _reduction(op_type):
    def convert(p):
        c = Chain(p)
        axes = normalize_axes(p.func.axis, p.input_arrays[0].ndim)
        reduce(c, op_type, p.input_names[0], axes, p.func.keepdims, p.output_names[0])
        return c.nodes

    return convert


def _arg_reduction(op_type):
    def convert(p):
        c = Chain(p)
        x = p.input_names[0]
        axis = p.func.axis
        if axis is None:
            x = c.op("Reshape", [x, c.const([-1])])
            axis = 0
        y = c.op(op_type, [x], axis=int(axis), keepdims=0)
        to = helper.np_dtype_to_tensor_dtype(numpy.dtype(p.output_dtypes[0]))
        c.op("Cast", [y], p.output_names, to=to)
        return c.nodes

    return convert


def _clip(p):
    c = Chain(p)
    lo = "" if p.func.x_min is None else c.scalar(p.func.x_min)
    hi = "" if p.func.x_max is None else c.scalar(p.func.x_max)
    c.op("Clip", [p.input_names[0], lo, hi], p.output_names)
    return c.nodes


def _linear_interpolate(p):
    c = Chain(p)
    t, x, y = p.input_names
    # t * x + (1 - t) * y == y + t * (x - y)
    c.op("Add", [y, c.op("Mul", [t, c.op("Sub", [x, y])])], p.output_names)
    return c.nodes


def _broadcast_to(p):
    c = Chain(p)
    c.op("Expand", [p.input_names[0], c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _sum_to(p):
    c = Chain(p)
    x_shape = p.input_arrays[0].shape
    out = p.output_shapes[0]
    lead = len(x_shape) - len(out)
    axes = list(range(lead)) + [
        lead + i for i, n in enumerate(out) if n == 1 and x_shape[lead + i] != 1
    ]
    y = reduce(c, "ReduceSum", p.input_names[0], axes, True) if axes else p.input_names[0]
    c.op("Reshape", [y, c.const(out)], p.output_names)
    return c.nodes


def _cast(p):
    c = Chain(p)
    to = helper.np_dtype_to_tensor_dtype(numpy.dtype(p.func.type))
    c.op("Cast", p.input_names, p.output_names, to=to)
    return c.nodes


def _identity(p):
    c = Chain(p)
    for x, y in zip(p.input_names, p.output_names):
        c.op("Identity", [x], [y])
    return c.nodes


def _channel_operand(c, p, name, index):
    """A per-channel operand (bias/scale) reshaped to broadcast from ``axis`` of x."""
    x_ndim = p.input_arrays[0].ndim
    shape = p.input_arrays[index].shape
    axis = p.func.axis % x_ndim if x_ndim else 0
    full = [1] * axis + list(shape) + [1] * (x_ndim - axis - len(shape))
    return c.op("Reshape", [name, c.const(full)])


def _bias(p):
    c = Chain(p)
    b = _channel_operand(c, p, p.input_names[1], 1)
    c.op("Add", [p.input_names[0], b], p.output_names)
    return c.nodes


def _scale(p):
    c = Chain(p)
    w = _channel_operand(c, p, p.input_names[1], 1)
    c.op("Mul", [p.input_names[0], w], p.output_names)
    return c.nodes


def _fmod(p):
    c = Chain(p)
    c.op("Mod", p.input_names, p.output_names, fmod=1)
    return c.nodes


def _rounding(op_type):
    """Floor or Ceil; integers are already whole, and ONNX's ops take floats only."""

    def convert(p):
        c = Chain(p)
        op = op_type if p.input_arrays[0].dtype.kind == "f" else "Identity"
        c.op(op, p.input_names, p.output_names)
        return c.nodes

    return convert


def _fix(p):
    c = Chain(p)
    x = p.input_names[0]
    if p.input_arrays[0].dtype.kind != "f":
        c.op("Identity", [x], p.output_names)
        return c.nodes
    negative = c.op("Less", [x, c.scalar(0)])
    c.op("Where", [negative, c.op("Ceil", [x]), c.op("Floor", [x])], p.output_names)
    return c.nodes


def _tensordot(p):
    c = Chain(p)
    a, b = p.input_names
    a_arr, b_arr = p.input_arrays
    a_axes, b_axes = p.func._pairs(a_arr.ndim, b_arr.ndim)
    a_free = [i for i in range(a_arr.ndim) if i not in a_axes]
    b_free = [i for i in range(b_arr.ndim) if i not in b_axes]
    summed = int(numpy.prod([a_arr.shape[i] for i in a_axes]))
    dtype = numpy.dtype(p.output_dtypes[0])
    a, b = (_cast_to(c, name, arr.dtype, dtype) for name, arr in ((a, a_arr), (b, b_arr)))
    a = c.op("Transpose", [a], perm=a_free + list(a_axes))
    a = c.op("Reshape", [a, c.const([-1, summed])])
    b = c.op("Transpose", [b], perm=list(b_axes) + b_free)
    b = c.op("Reshape", [b, c.const([summed, -1])])
    y = c.op("MatMul", [a, b])
    c.op("Reshape", [y, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _cast_to(c, name, dtype, to):
    if numpy.dtype(dtype) == to:
        return name
    return c.op("Cast", [name], to=helper.np_dtype_to_tensor_dtype(to))


def _einsum(p):
    """ONNX's Einsum (opset 12 on), its letters lowercase (dbr's subscripts use both cases)."""
    c = Chain(p)
    f = p.func
    letters = "".join(dict.fromkeys("".join(f.in_subs) + f.out_sub))
    if len(letters) > 26 or len(set(f.out_sub)) != len(f.out_sub):
        raise ValueError(
            f"dbr.onnx: EinSum converts subscripts of at most 26 letters, each once in the "
            f"output, got {','.join(f.in_subs)}->{f.out_sub}"
        )
    table = str.maketrans(letters, "abcdefghijklmnopqrstuvwxyz"[: len(letters)])
    equation = ",".join(s.translate(table) for s in f.in_subs) + "->" + f.out_sub.translate(table)
    c.op("Einsum", p.input_names, p.output_names, equation=equation)
    return c.nodes


def _cumsum(p):
    c = Chain(p)
    axis = p.func.axis % p.input_arrays[0].ndim
    c.op(
        "CumSum", [p.input_names[0], c.const(axis)], p.output_names,
        reverse=int(bool(p.func.reverse)),
    )  # fmt: skip
    return c.nodes


def _cumprod(p):
    """``y[k] = prod(x[j] for j <= k)`` (``j >= k`` reversed): ONNX has no CumProd, so each
    ``y[k]`` is a ReduceProd of ``x`` with the factors past ``k`` replaced by ones."""
    c = Chain(p)
    x = p.input_names[0]
    shape = p.input_arrays[0].shape
    axis = p.func.axis % len(shape)
    n = shape[axis]
    j, k = numpy.ogrid[:n, :n]
    keep = (j >= k) if p.func.reverse else (j <= k)
    keep = keep.reshape((n, n) + (1,) * (len(shape) - axis - 1))
    spread = c.op("Unsqueeze", [x, c.const([axis + 1])])
    factors = c.op("Where", [c.const(keep, numpy.bool_, "keep"), spread, c.scalar(1)])
    reduce(c, "ReduceProd", factors, [axis], False, p.output_names[0])
    return c.nodes


def _erfc(p):
    c = Chain(p)
    c.op("Sub", [c.scalar(1), c.op("Erf", p.input_names)], p.output_names)
    return c.nodes


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single precision.
_ERFINV_CENTRAL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_ERFINV_TAIL = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip


def _polynomial(c, w, coefficients):
    y = c.scalar(coefficients[0])
    for a in coefficients[1:]:
        y = c.op("Add", [c.op("Mul", [y, w]), c.scalar(a)])
    return y


def _erfinv_of(c, x, w):
    """``erfinv(x)`` given ``w = -log((1 - x)(1 + x))``, by Giles' approximation."""
    central = _polynomial(c, c.op("Sub", [w, c.scalar(2.5)]), _ERFINV_CENTRAL)
    tail = _polynomial(c, c.op("Sub", [c.op("Sqrt", [w]), c.scalar(3.0)]), _ERFINV_TAIL)
    y = c.op("Mul", [c.op("Where", [c.op("Less", [w, c.scalar(5.0)]), central, tail]), x])
    # +-1 map to +-inf (the polynomial in sqrt(inf) would give nan).
    at_end = c.op("Equal", [c.op("Abs", [x]), c.scalar(1)])
    return c.op("Where", [at_end, c.op("Mul", [x, c.scalar(numpy.inf)]), y])


def _erfinv(p):
    c = Chain(p)
    x = p.input_names[0]
    one = c.scalar(1)
    w = c.op("Neg", [c.op("Log", [c.op("Mul", [c.op("Sub", [one, x]), c.op("Add", [one, x])])])])
    c.op("Identity", [_erfinv_of(c, x, w)], p.output_names)
    return c.nodes


def _erfcinv(p):
    c = Chain(p)
    x = p.input_names[0]
    # erfcinv(x) = erfinv(1 - x), with w = -log(x (2 - x)) computed from x itself.
    w = c.op("Neg", [c.op("Log", [c.op("Mul", [x, c.op("Sub", [c.scalar(2), x])])])])
    c.op("Identity", [_erfinv_of(c, c.op("Sub", [c.scalar(1), x]), w)], p.output_names)
    return c.nodes


def _ndtri(p):
    c = Chain(p)
    x = c.op("Mul", [p.input_names[0], c.scalar(2)])
    # ndtri(p) = -sqrt(2) erfcinv(2 p), exact in the lower tail where erfinv(2 p - 1) is not.
    w = c.op("Neg", [c.op("Log", [c.op("Mul", [x, c.op("Sub", [c.scalar(2), x])])])])
    y = _erfinv_of(c, c.op("Sub", [c.scalar(1), x]), w)
    c.op("Mul", [y, c.scalar(-numpy.sqrt(2))], p.output_names)
    return c.nodes


def _xlogx(p):
    c = Chain(p)
    x = p.input_names[0]
    positive = c.op("Greater", [x, c.scalar(0)])
    safe = c.op("Where", [positive, x, c.scalar(1)])
    c.op("Mul", [x, c.op("Log", [safe])], p.output_names)
    return c.nodes


def _ndtr(p):
    c = Chain(p)
    erf = c.op("Erf", [c.op("Mul", [p.input_names[0], c.scalar(numpy.sqrt(0.5))])])
    c.op("Mul", [c.op("Add", [erf, c.scalar(1)]), c.scalar(0.5)], p.output_names)
    return c.nodes


def _det(p):
    c = Chain(p)
    c.op("Det", p.input_names, p.output_names)
    return c.nodes


def _inv(p):
    """The adjugate over the determinant: ``inv(A)[i, j] = (-1)^(i+j) det(A without row j
    and column i) / det(A)``, the minors gathered with constant indexes (ONNX has no
    inverse); fine for the small matrices it is meant for (n**4 elements are gathered)."""
    c = Chain(p)
    a = p.input_names[0]
    shape = p.input_arrays[0].shape
    n = shape[-1]
    if n == 1:
        c.op("Reciprocal", [a], p.output_names)
        return c.nodes
    others = numpy.array([[k for k in range(n) if k != i] for i in range(n)])  # (n, n - 1)
    batch = len(shape) - 2
    rows = c.op("Gather", [a, c.const(others)], axis=batch)  # (..., i, n-1, n)
    minors = c.op("Gather", [rows, c.const(others)], axis=batch + 2)  # (..., i, r, j, c)
    order = list(range(batch)) + [batch + k for k in (0, 2, 1, 3)]
    minors = c.op("Transpose", [minors], perm=order)  # (..., i, j, r, c)
    signs = numpy.where(numpy.add.outer(numpy.arange(n), numpy.arange(n)) % 2, -1, 1)
    cofactors = c.op("Mul", [c.op("Det", [minors]), c.const(signs, p.input_arrays[0].dtype)])
    swap = list(range(batch)) + [batch + 1, batch]
    adjugate = c.op("Transpose", [cofactors], perm=swap)
    det = c.op("Unsqueeze", [c.op("Det", [a]), c.const([batch, batch + 1])])
    c.op("Div", [adjugate, det], p.output_names)
    return c.nodes


def _arctan2(p):
    """``arctan2(x1, x2)`` from Atan of the quotient and the quadrant (ONNX has no Atan2)."""
    c = Chain(p)
    x1, x2 = p.input_names
    zero = c.scalar(0)
    x2_zero = c.op("Equal", [x2, zero])
    base = c.op("Atan", [c.op("Div", [x1, c.op("Where", [x2_zero, c.scalar(1), x2])])])
    half_turn = c.op("Where", [c.op("Less", [x1, zero]), c.scalar(-numpy.pi), c.scalar(numpy.pi)])
    left = c.op("Add", [base, half_turn])
    axis = c.op("Mul", [c.op("Sign", [x1]), c.scalar(numpy.pi / 2)])
    off_axis = c.op("Where", [c.op("Less", [x2, zero]), left, base])
    c.op("Where", [x2_zero, axis, off_axis], p.output_names)
    return c.nodes


def _weighted_average(p):
    c = Chain(p)
    x, w = p.input_names
    x_arr = p.input_arrays[0]
    axes = normalize_axes(p.func.axis, x_arr.ndim)
    if axes is not None:
        shape = [x_arr.shape[i] if i == axes[0] else 1 for i in range(x_arr.ndim)]
        w_full = c.op("Reshape", [w, c.const(shape)])
    else:
        w_full = w
    total = reduce(c, "ReduceSum", c.op("Mul", [x, w_full]), axes, p.func.keepdims)
    c.op("Div", [total, reduce(c, "ReduceSum", w, None, False)], p.output_names)
    return c.nodes


def _batch_l2_norm_squared(p):
    c = Chain(p)
    x = p.input_names[0]
    flat = c.op("Reshape", [x, c.const([0, -1])])
    reduce(c, "ReduceSum", c.op("Mul", [flat, flat]), [1], False, p.output_names[0])
    return c.nodes


def _fft(p):
    """The DFT over the last axis: DFT from opset 17, a MatMul with the DFT matrix before.

    DFT reads the real and imaginary parts stacked on a last axis of 2; the matrices hold
    ``cos`` and ``sin`` of ``2 pi j k / n``, computed in float64 with ``j k`` taken modulo
    ``n``.
    """
    c = Chain(p)
    real, imag = p.input_names
    shape = p.input_arrays[0].shape
    dtype = p.input_arrays[0].dtype
    inverse = p.func.label == "IFFT"
    if p.opset_version >= 17:
        if len(shape) == 1:  # DFT transforms an axis after the batch axis
            real, imag = (c.op("Unsqueeze", [v, c.const([0])]) for v in (real, imag))
        z = c.op("Concat", [c.op("Unsqueeze", [v, c.const([-1])]) for v in (real, imag)], axis=-1)
        axis = max(len(shape), 2) - 1
        if p.opset_version >= 20:
            y = c.op("DFT", [z, "", c.const(axis)], inverse=int(inverse))
        else:
            y = c.op("DFT", [z], axis=axis, inverse=int(inverse))
        if len(shape) == 1:
            y = c.op("Squeeze", [y, c.const([0])])
        for part, output in enumerate(p.output_names):
            c.op("Gather", [y, c.const(part)], [output], axis=-1)
        return c.nodes
    n = shape[-1]
    angle = 2 * numpy.pi * (numpy.outer(numpy.arange(n), numpy.arange(n)) % n) / n
    scale = 1.0 / n if inverse else 1.0
    cos = c.const(numpy.cos(angle) * scale, dtype, "cos")
    sin = c.const(numpy.sin(angle) * (scale if inverse else -scale), dtype, "sin")
    # (real + i imag) (cos + i sin) with sin's sign that of the transform's exponent
    c.op("Sub", [c.op("MatMul", [real, cos]), c.op("MatMul", [imag, sin])], [p.output_names[0]])
    c.op("Add", [c.op("MatMul", [imag, cos]), c.op("MatMul", [real, sin])], [p.output_names[1]])
    return c.nodes


CONVERTERS = {
    "Add": _same("Add"),
    "Sub": _same("Sub"),
    "Mul": _same("Mul"),
    "Div": _same("Div"),
    "PowVarVar": _same("Pow"),
    "MultiAdd": _multi_add,
    "AddConstant": _with_constant("Add"),
    "SubFromConstant": _with_constant("Sub", constant_first=True),
    "MulConstant": _with_constant("Mul"),
    "DivFromConstant": _with_constant("Div", constant_first=True),
    "PowVarConst": _with_constant("Pow"),
    "PowConstVar": _with_constant("Pow", constant_first=True),
    "Neg": _same("Neg"),
    "Absolute": _same("Abs"),
    "Log": _same("Log"),
    "Exp": _same("Exp"),
    "Sqrt": _same("Sqrt"),
    "Rsqrt": _rsqrt,
    "Square": _square,
    "Log1p": _log1p,
    "Expm1": _expm1,
    "Log2": _log_base(2.0),
    "Log10": _log_base(10.0),
    "Sin": _same("Sin"),
    "Cos": _same("Cos"),
    "Tan": _same("Tan"),
    "Arcsin": _same("Asin"),
    "Arccos": _same("Acos"),
    "Arctan": _same("Atan"),
    "Sinh": _same("Sinh"),
    "Cosh": _same("Cosh"),
    "Arctanh": _arctanh,
    "Erf": _same("Erf"),
    "Maximum": _same("Max"),
    "Minimum": _same("Min"),
    "MatMul": _matmul,
    "BatchMatMul": _batch_matmul,
    "Sum": _reduction("ReduceSum"),
    "Mean": _reduction("ReduceMean"),
    "Max": _reduction("ReduceMax"),
    "Min": _reduction("ReduceMin"),
    "Prod": _reduction("ReduceProd"),
    "LogSumExp": _reduction("ReduceLogSumExp"),
    "ArgMax": _arg_reduction("ArgMax"),
    "ArgMin": _arg_reduction("ArgMin"),
    "Clip": _clip,
    "LinearInterpolate": _linear_interpolate,
    "BroadcastTo": _broadcast_to,
    "SumTo": _sum_to,
    "Cast": _cast,
    "Copy": _identity,
    "Identity": _identity,
    "Bias": _bias,
    "Scale": _scale,
    "Fmod": _fmod,
    "Sign": _same("Sign"),
    "Floor": _rounding("Floor"),
    "Ceil": _rounding("Ceil"),
    "Fix": _fix,
    "TensorDot": _tensordot,
    "EinSum": _einsum,
    "Cumsum": _cumsum,
    "Cumprod": _cumprod,
    "Erfc": _erfc,
    "ErfInv": _erfinv,
    "ErfcInv": _erfcinv,
    "Ndtr": _ndtr,
    "Ndtri": _ndtri,
    "XLogX": _xlogx,
    "Det": _det,
    "BatchDet": _det,
    "Inv": _inv,
    "BatchInv": _inv,
    "Arctan2": _arctan2,
    "WeightedAverage": _weighted_average,
    "BatchL2NormSquared": _batch_l2_norm_squared,
    "FFT": _fft,
    "IFFT": _fft,
}
