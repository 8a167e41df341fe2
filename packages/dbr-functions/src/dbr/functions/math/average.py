"""average and mean: (weighted) arithmetic means over axes."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array
from dbr.functions.math._axes import (
    Reduction,
    check_axes,
    kept_shape,
    normalize_axis,
    reduced_size,
)

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.float32


class Mean(Reduction):
    """The arithmetic mean over some axes (all by default)."""

    who = "average"

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = shape = x.shape
        n = reduced_size(shape, self.axis)
        if x.dtype == _float16:
            y = x.sum(axis=self.axis, dtype=_float32, keepdims=self.keepdims)
            y *= _float32(1.0 / n) if n else _float32(numpy.nan)
            return (force_array(y.astype(_float16)),)
        y = force_array(x.sum(axis=self.axis, keepdims=self.keepdims))
        y *= x.dtype.type(1.0 / n) if n else x.dtype.type(numpy.nan)
        return (y,)

    def backward(self, indexes, grad_outputs):
        return MeanGrad(self._x_shape, self.axis, self.keepdims).apply(grad_outputs)


class MeanGrad(FunctionNode):
    """The gradient of Mean: ``gy / n`` broadcast back to the input's shape.

    Its own gradient is the mean of ``ggx`` over the same axes.
    """

    def __init__(self, x_shape, axis, keepdims):
        self._x_shape = x_shape
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, inputs):
        gy = inputs[0]
        n = reduced_size(self._x_shape, self.axis)
        if gy.dtype == _float16:
            gx = (gy.astype(_float32) * _float32(1.0 / n)).astype(_float16) if n else gy
        else:
            gx = gy * gy.dtype.type(1.0 / n) if n else gy
        gx = gx.reshape(kept_shape(self._x_shape, self.axis))
        return (get_array_module(gx).broadcast_to(gx, self._x_shape),)

    def backward(self, indexes, grad_outputs):
        return Mean(self.axis, self.keepdims).apply(grad_outputs)


class WeightedAverage(FunctionNode):
    """``sum(x * w) / sum(w)`` over one axis (``w`` of that axis' length) or all axes."""

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "weights"))
        x_type, w_type = in_types
        type_check.expect(x_type.dtype.kind == "f", w_type.dtype == x_type.dtype)
        check_axes(x_type, self.axis, "average")
        if self.axis is None:
            type_check.expect(w_type.shape == x_type.shape)
        else:
            type_check.expect(w_type.ndim == 1, w_type.shape[0] == x_type.shape[self.axis[0]])

    def _weight_shape(self, ndim, size):
        """The shape that broadcasts 1-D weights along the averaged axis (None: no axis)."""
        if self.axis is None:
            return None
        a = self.axis[0] % ndim
        return tuple([size if i == a else 1 for i in range(ndim)])

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        self.retain_outputs((0,))
        x, w = inputs
        shape = self._weight_shape(x.ndim, w.size)
        acc = _float32 if x.dtype == _float16 else x.dtype
        wx = x * (w if shape is None else w.reshape(shape))
        y = force_array(wx.sum(axis=self.axis, dtype=acc, keepdims=self.keepdims))
        y /= w.sum(dtype=acc)
        return (y.astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, w = self.get_retained_inputs()
        gy = grad_outputs[0]
        keep = kept_shape(x.shape, self.axis)
        scale = gy / ops.broadcast_to(ops.sum(w), gy.shape)
        scale = ops.broadcast_to(ops.reshape(scale, keep), x.shape)
        w_shape = self._weight_shape(x.ndim, w.size)
        ret = []
        if 0 in indexes:
            wb = w if w_shape is None else ops.broadcast_to(ops.reshape(w, w_shape), x.shape)
            ret.append(scale * wb)
        if 1 in indexes:
            y = self.get_retained_outputs()[0]
            gw = scale * (x - ops.broadcast_to(ops.reshape(y, keep), x.shape))
            if w_shape is not None:
                gw = ops.reshape(ops.sum_to(gw, w_shape), w.shape)
            ret.append(gw)
        return tuple(ret)


def average(x, axis=None, weights=None, keepdims=False):
    """Weighted average of the elements of ``x`` over ``axis``.

    Without ``weights`` this is the arithmetic mean; with them it is
    ``sum(x * weights) / sum(weights)`` over the reduced axes.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64; float16 is accumulated in float32).
        axis (None, int or tuple of int): the axes to average over (all if
            None); negative values count from the last axis. With
            ``weights`` it must be None or a single axis.
        weights (None, Variable or array): the weights, of ``x``'s dtype.
            When ``axis`` is None they have ``x``'s shape; when ``axis`` is
            an int they are 1-D with ``weights.shape == (x.shape[axis],)``.
            None gives every element weight one. Gradients flow to them too.
        keepdims (bool): keep the reduced axes with length one.

    Returns:
        Variable: the averages, of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    >>> average(x, axis=1).array
    array([1.5, 4. ], dtype=float32)
    >>> average(x, axis=1, weights=np.array([3.0, 1.0], np.float32)).array
    array([1.25, 3.5 ], dtype=float32)
    """
    if weights is None:
        return Mean(axis, keepdims).apply((x,))[0]
    axis = normalize_axis(axis, "average")
    if axis is not None and len(axis) != 1:
        raise ValueError(
            f"average: expected axis to be None or a single axis when weights are given, "
            f"got {axis}"
        )
    return WeightedAverage(axis, keepdims).apply((x, weights))[0]


mean = average
"""Alias of :func:`average` (Chainer's ``F.mean``)."""
