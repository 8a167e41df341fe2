"""Importers of elementwise arithmetic and math (broadcasting as ONNX does), Clip, Where,
Cast, CumSum, DFT and the reductions."""

import functools

import numpy

import dbr.functions as F
from dbr.core import Variable, ops
from dbr.core.backend import get_array_module
from dbr.onnx.importers._util import array_of, axes_of, importer, ints, shape_of
from onnx import helper

IMPORTERS = {}


def broadcast(*values):
    """``values`` (Variables or arrays) broadcast to their common shape, as ONNX broadcasts."""
    shape = numpy.broadcast_shapes(*[shape_of(v) for v in values])
    out = []
    for v in values:
        if shape_of(v) == shape:
            out.append(v)
        elif isinstance(v, Variable):
            out.append(F.broadcast_to(v, shape))
        else:
            out.append(numpy.broadcast_to(v, shape))
    return out


def _cast_like(value, like):
    """A constant ``value`` in the dtype of ``like`` (ONNX lets Pow's exponent differ)."""
    if isinstance(value, Variable) or value.dtype == like.dtype:
        return value
    return value.astype(like.dtype)


def _binary(op_type, function):
    importer(IMPORTERS, op_type)(lambda params, a, b: function(a, b))


_binary("Add", ops.add)
_binary("Sub", ops.sub)
_binary("Mul", ops.mul)
_binary("Div", ops.div)


@importer(IMPORTERS, "Pow")
def _pow(params, x, y):
    return ops.pow(x, _cast_like(y, x))


@importer(IMPORTERS, "Sum")
def _sum(params, *xs):
    return xs[0] if len(xs) == 1 else ops.add(*broadcast(*xs))


@importer(IMPORTERS, "Mean")
def _mean(params, *xs):
    return _sum(params, *xs) * (1 / len(xs))


def _variadic(function):
    def run(params, *xs):
        xs = broadcast(*xs)
        return functools.reduce(function, xs)

    return run


importer(IMPORTERS, "Max")(_variadic(F.maximum))
importer(IMPORTERS, "Min")(_variadic(F.minimum))


@importer(IMPORTERS, "Mod")
def _mod(params, x, y):
    if params.get("fmod", 0):
        return F.fmod(*broadcast(x, y))
    quotient = numpy.floor(array_of(x) / array_of(y))
    return ops.sub(x, ops.mul(quotient.astype(array_of(x).dtype), y))


def _unary(op_type, function):
    importer(IMPORTERS, op_type)(lambda params, x: function(x))


for _op_type, _function in {
    "Neg": ops.neg,
    "Abs": ops.absolute,
    "Exp": F.exp,
    "Log": F.log,
    "Sqrt": F.sqrt,
    "Reciprocal": lambda x: 1.0 / x,
    "Sin": F.sin,
    "Cos": F.cos,
    "Tan": F.tan,
    "Asin": F.arcsin,
    "Acos": F.arccos,
    "Atan": F.arctan,
    "Sinh": F.sinh,
    "Cosh": F.cosh,
    "Atanh": F.arctanh,
    "Asinh": lambda x: F.log(x + F.sqrt(x * x + 1)),
    "Acosh": lambda x: F.log(x + F.sqrt(x * x - 1)),
    "Erf": F.erf,
    "Identity": F.identity,
}.items():
    _unary(_op_type, _function)


@importer(IMPORTERS, "Clip", static=(1, 2))
def _clip(params, x, low=None, high=None):
    low = params.get("min", -numpy.inf) if low is None else float(low)
    high = params.get("max", numpy.inf) if high is None else float(high)
    return F.clip(x, low, high)


@importer(IMPORTERS, "Where")
def _where(params, condition, x, y):
    condition, x, y = broadcast(array_of(condition), x, y)
    return F.where(condition, x, y)


@importer(IMPORTERS, "Cast")
def _cast(params, x):
    dtype = helper.tensor_dtype_to_np_dtype(params.get("to"))
    if dtype.kind == "f" and x.dtype.kind == "f":
        return x if dtype == x.dtype else F.cast(x, dtype)
    return array_of(x).astype(dtype)


@importer(IMPORTERS, "CumSum", static=(1,))
def _cumsum(params, x, axis):
    axis = int(numpy.asarray(axis)) % x.ndim
    reverse = params.get("reverse", 0)
    y = F.flip(x, axis) if reverse else x
    y = F.cumsum(y, axis)
    if params.get("exclusive", 0):
        y = y - (F.flip(x, axis) if reverse else x)
    return F.flip(y, axis) if reverse else y


@importer(IMPORTERS, "DFT", static=(1, 2))
def _dft(params, x, dft_length=None, axis=None):
    """The complex DFT (or its inverse) of ``(..., n, 2)`` or real ``(..., n, 1)`` input."""
    if params.get("onesided", 0):
        raise params.error("onesided=1 is not supported (a two-sided DFT is)")
    axis = ints(axis) if axis is not None else []
    axis = axis[0] if axis else params.get("axis", 1 if params.opset_version < 20 else -2)
    axis %= x.ndim
    if axis == x.ndim - 1:
        raise params.error(f"axis={axis} is the last axis, which holds the complex parts")
    n = x.shape[axis]
    length = ints(dft_length) if dft_length is not None else []
    if length and length[0] != n:
        raise params.error(f"dft_length={length[0]} other than the axis' length {n}")
    real = F.moveaxis(F.get_item(x, (Ellipsis, 0)), axis, -1)
    if x.shape[-1] == 2:
        imag = F.moveaxis(F.get_item(x, (Ellipsis, 1)), axis, -1)
    else:
        array = array_of(x)
        imag = get_array_module(array).zeros(real.shape, array.dtype)
    transform = F.ifft if params.get("inverse", 0) else F.fft
    parts = [F.moveaxis(v, -1, axis) for v in transform((real, imag))]
    return F.stack(parts, axis=-1)


def _reduction(function, axes_input_from):
    def run(params, x, axes=None):
        opset = params.opset_version
        if opset < axes_input_from:
            axes = axes_of(params, None, x.ndim)
        else:
            axes = axes_of(params, axes, x.ndim)
            if axes == [] or axes is None:
                axes = None
                if params.get("noop_with_empty_axes", 0):
                    return x
        keepdims = bool(params.get("keepdims", 1))
        return function(x, None if axes is None else tuple(axes), keepdims)

    return run


_REDUCTIONS = {
    "ReduceSum": (lambda x, a, k: F.sum(x, axis=a, keepdims=k), 13),
    "ReduceMean": (lambda x, a, k: F.mean(x, axis=a, keepdims=k), 18),
    "ReduceMax": (lambda x, a, k: F.max(x, axis=a, keepdims=k), 18),
    "ReduceMin": (lambda x, a, k: F.min(x, axis=a, keepdims=k), 18),
    "ReduceProd": (lambda x, a, k: F.prod(x, axis=a, keepdims=k), 18),
    "ReduceLogSumExp": (lambda x, a, k: F.logsumexp(x, axis=a, keepdims=k), 18),
    "ReduceLogSum": (lambda x, a, k: F.log(F.sum(x, axis=a, keepdims=k)), 18),
    "ReduceSumSquare": (lambda x, a, k: F.sum(x * x, axis=a, keepdims=k), 18),
    "ReduceL1": (lambda x, a, k: F.sum(abs(x), axis=a, keepdims=k), 18),
    "ReduceL2": (lambda x, a, k: F.sqrt(F.sum(x * x, axis=a, keepdims=k)), 18),
}
for _op_type, (_function, _since) in _REDUCTIONS.items():
    importer(IMPORTERS, _op_type, static=(1,))(_reduction(_function, _since))


@importer(IMPORTERS, "Det")
def _det(params, x):
    if x.ndim == 2:
        return F.det(x)
    batch = x.shape[:-2]
    return F.reshape(F.batch_det(F.reshape(x, (-1, *x.shape[-2:]))), batch)
