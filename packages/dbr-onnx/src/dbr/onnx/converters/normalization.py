"""Converters of batch (fixed and batch-statistics), fixed decorrelated, group, local-response,
layer and L2 normalization."""

import numpy

from dbr.onnx.converters._util import Chain, reduce
from onnx import helper


def _param_shape(x_ndim, gamma_shape, axis):
    """The shape that broadcasts a per-feature parameter against x."""
    if axis is None:
        return [1, *gamma_shape] + [1] * (x_ndim - 1 - len(gamma_shape))
    return [1 if i in axis else None for i in range(x_ndim)]


def _reduced_axes(x_ndim, gamma_ndim, axis):
    if axis is None:
        return [0, *range(1 + gamma_ndim, x_ndim)]
    return sorted(axis)


def _broadcast_params(c, p, names, x_shape, gamma_shape, axis):
    shape = _param_shape(len(x_shape), gamma_shape, axis)
    if None in shape:
        shape = [x_shape[i] if s is None else 1 for i, s in enumerate(shape)]
    return [c.op("Reshape", [n, c.const(shape)]) for n in names]


def _axis(p):
    axis = p.func.axis
    ndim = p.input_arrays[0].ndim
    return None if axis is None else tuple(sorted(a % ndim for a in axis))


def _standard_layout(p, axis):
    x = p.input_arrays[0]
    gamma = p.input_arrays[1]
    if axis is None:
        return gamma.ndim == 1 and x.ndim >= 2
    return x.ndim >= 2 and tuple(sorted(axis)) == (0, *range(2, x.ndim))


def _fixed_batch_normalization(p):
    c = Chain(p)
    f = p.func
    x, gamma, beta, mean, var = p.input_names
    axis = _axis(p)
    if _standard_layout(p, axis):
        c.op(
            "BatchNormalization", [x, gamma, beta, mean, var], p.output_names,
            epsilon=float(f.eps),
        )  # fmt: skip
        return c.nodes
    x_shape = p.input_arrays[0].shape
    gamma_shape = p.input_arrays[1].shape
    gamma, beta, mean, var = _broadcast_params(
        c, p, [gamma, beta, mean, var], x_shape, gamma_shape, axis
    )
    _normalize(c, p, x, mean, var, gamma, beta, f.eps)
    return c.nodes


def _normalize(c, p, x, mean, var, gamma, beta, eps):
    std = c.op("Sqrt", [c.op("Add", [var, c.scalar(eps)])])
    xhat = c.op("Div", [c.op("Sub", [x, mean]), std])
    c.op("Add", [c.op("Mul", [xhat, gamma]), beta], p.output_names[:1])


def _batch_normalization(p):
    c = Chain(p)
    f = p.func
    x, gamma, beta = p.input_names
    x_shape = p.input_arrays[0].shape
    gamma_shape = p.input_arrays[1].shape
    axis = _axis(p)
    axes = _reduced_axes(len(x_shape), len(gamma_shape), axis)
    mean = reduce(c, "ReduceMean", x, axes, True)
    centered = c.op("Sub", [x, mean])
    var = reduce(c, "ReduceMean", c.op("Mul", [centered, centered]), axes, True)
    gamma, beta = _broadcast_params(c, p, [gamma, beta], x_shape, gamma_shape, axis)
    _normalize(c, p, x, mean, var, gamma, beta, f.eps)
    return c.nodes


def _local_response_normalization(p):
    c = Chain(p)
    f = p.func
    size = 2 * f.half + 1
    c.op(
        "LRN", p.input_names, p.output_names, size=size, bias=float(f.k),
        alpha=float(f.alpha) * size, beta=float(f.beta),
    )  # fmt: skip
    return c.nodes


def _normalize_l2(p):
    c = Chain(p)
    f = p.func
    x = p.input_names[0]
    ndim = p.input_arrays[0].ndim
    axis = f.axis if isinstance(f.axis, (tuple, list)) else (f.axis,)
    squares = c.op("Mul", [x, x])
    norm = c.op("Sqrt", [reduce(c, "ReduceSum", squares, [a % ndim for a in axis], True)])
    norm = c.op("Add", [norm, c.scalar(f.eps)])
    c.op("Div", [x, norm], p.output_names)
    return c.nodes


def _group_normalization(p):
    c = Chain(p)
    f = p.func
    x, gamma, beta = p.input_names
    x_shape = p.input_arrays[0].shape
    grouped = c.op("Reshape", [x, c.const([0, f.groups, -1])])
    mean = reduce(c, "ReduceMean", grouped, [2], True)
    centered = c.op("Sub", [grouped, mean])
    var = reduce(c, "ReduceMean", c.op("Mul", [centered, centered]), [2], True)
    std = c.op("Sqrt", [c.op("Add", [var, c.scalar(f.eps)])])
    xhat = c.op("Div", [centered, std])
    xhat = c.op("Reshape", [xhat, c.op("Shape", [x])])
    shape = [x_shape[1]] + [1] * (len(x_shape) - 2)
    gamma = c.op("Reshape", [gamma, c.const(shape)])
    beta = c.op("Reshape", [beta, c.const(shape)])
    c.op("Add", [c.op("Mul", [xhat, gamma]), beta], p.output_names)
    return c.nodes


def _layer_normalization(p):
    """LayerNormalization from opset 17; before it, its decomposition over the last axis."""
    c = Chain(p)
    x, gamma, beta = p.input_names
    eps = float(p.func.eps)
    if p.opset_version >= 17:
        c.op("LayerNormalization", [x, gamma, beta], p.output_names[:1], axis=-1, epsilon=eps)
        return c.nodes
    mean = reduce(c, "ReduceMean", x, [1], True)
    centered = c.op("Sub", [x, mean])
    var = reduce(c, "ReduceMean", c.op("Mul", [centered, centered]), [1], True)
    xhat = c.op("Div", [centered, c.op("Sqrt", [c.op("Add", [var, c.scalar(eps)])])])
    c.op("Add", [c.op("Mul", [xhat, gamma]), beta], p.output_names[:1])
    return c.nodes


def _fixed_decorrelated_batch_normalization(p):
    """``projection[g] @ (x_g - mean[g])`` for each channel group ``g`` (one batched MatMul).

    ``x`` (``(N, G * C, ...)``) is viewed as ``(G, C, m)`` with ``m`` the samples of a
    channel, as dbr's forward does, in float32 at least.
    """
    c = Chain(p)
    x, mean, projection = p.input_names
    x_arr = p.input_arrays[0]
    shape = x_arr.shape
    groups = p.func.groups
    dtype = numpy.result_type(numpy.float32, x_arr.dtype)
    if dtype != x_arr.dtype:
        to = helper.np_dtype_to_tensor_dtype(dtype)
        x, mean, projection = (c.op("Cast", [n], to=to) for n in (x, mean, projection))
    swap = [1, 0, *range(2, len(shape))]
    grouped = c.op("Transpose", [x], perm=swap)
    grouped = c.op("Reshape", [grouped, c.const([groups, shape[1] // groups, -1])])
    centred = c.op("Sub", [grouped, c.op("Unsqueeze", [mean, c.const([2])])])
    y = c.op("MatMul", [projection, centred])
    y = c.op("Reshape", [y, c.const([shape[1], shape[0], *shape[2:]])])
    if dtype == x_arr.dtype:
        c.op("Transpose", [y], p.output_names, perm=swap)
    else:
        y = c.op("Transpose", [y], perm=swap)
        c.op("Cast", [y], p.output_names, to=helper.np_dtype_to_tensor_dtype(x_arr.dtype))
    return c.nodes


CONVERTERS = {
    "FixedBatchNormalization": _fixed_batch_normalization,
    "BatchNormalization": _batch_normalization,
    "LocalResponseNormalization": _local_response_normalization,
    "NormalizeL2": _normalize_l2,
    "GroupNormalization": _group_normalization,
    "FixedDecorrelatedBatchNormalization": _fixed_decorrelated_batch_normalization,
    "LayerNormalization": _layer_normalization,
}
