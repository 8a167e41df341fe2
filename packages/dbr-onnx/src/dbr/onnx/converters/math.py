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
}
