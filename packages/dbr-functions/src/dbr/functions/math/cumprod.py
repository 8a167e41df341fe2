"""cumprod: cumulative products along an axis, with gradients that allow zeros.

The gradient of a cumulative product cannot divide by the input (it may hold
zeros); it is a first-order linear recurrence along the axis instead, computed
by :class:`LinearScan`, whose own gradients are again such recurrences. So
every order of derivative is exact wherever the input has zeros.
"""

import numpy

from dbr.core import FunctionNode, ops
from dbr.core.backend import get_array_module
from dbr.functions._docs import fill
from dbr.functions.math._axes import Scan, flip, normalize_single_axis
from dbr.functions.math.cumsum import DOCS

_float16 = numpy.dtype(numpy.float16)


def _accumulation_dtype(dtype):
    return numpy.dtype(numpy.float32) if dtype == _float16 else dtype


class Cumprod(Scan):
    """Cumulative products along one axis; with ``reverse``, from the end of the axis."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x = inputs[0]
        axis = self.axis % x.ndim
        if self.reverse:
            x = flip(x, axis)
        xp = get_array_module(x)
        y = xp.cumprod(x, axis=axis, dtype=_accumulation_dtype(x.dtype)).astype(
            x.dtype, copy=False
        )
        return (flip(y, axis) if self.reverse else y,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        y = self.get_retained_outputs()[0]
        axis = self.axis % x.ndim
        if x.shape[axis] == 0:
            return (None,)
        # gx[i] = y[i-1] * s[i]: the product of the factors before i times the
        # recurrence s[i] = gy[i] + x[i+1] * s[i+1] run from the end (mirrored for reverse).
        step = -1 if self.reverse else 1
        before = shift(y, axis, step, 1)
        scan = LinearScan(axis, forward=self.reverse)
        s = scan.apply((shift(x, axis, -step, 0), grad_outputs[0]))[0]
        return (before * s,)


class Shift(FunctionNode):
    """Shift by ``step`` (+1 or -1) along ``axis``: ``y[i] = x[i - step]``, ``fill`` at an end."""

    def __init__(self, axis, step, fill):
        self.axis = axis
        self.step = step
        self.fill = fill

    def forward(self, inputs):
        x = inputs[0]
        y = get_array_module(x).empty_like(x)
        n = x.shape[self.axis]
        if n:
            lead = (slice(None),) * self.axis
            if self.step > 0:
                y[lead + (slice(1, None),)] = x[lead + (slice(None, -1),)]
                y[lead + (0,)] = self.fill
            else:
                y[lead + (slice(None, -1),)] = x[lead + (slice(1, None),)]
                y[lead + (-1,)] = self.fill
        return (y,)

    def backward(self, indexes, grad_outputs):
        return Shift(self.axis, -self.step, 0).apply(grad_outputs)


def shift(x, axis, step, fill):
    """``x`` shifted by ``step`` (+1 or -1) along ``axis``, the vacated end set to ``fill``."""
    return Shift(axis, step, fill).apply((x,))[0]


class LinearScan(FunctionNode):
    """The recurrence ``s[i] = a[i] * s[i-1] + b[i]`` along ``axis`` (``s[-1] = 0``).

    With ``forward=False`` it runs from the end: ``s[i] = a[i] * s[i+1] + b[i]``.
    ``a`` and ``b`` have one shape; ``a``'s first element (last, running
    backwards) is not used.
    """

    def __init__(self, axis, forward=True):
        self.axis = axis
        self.forward_direction = forward

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        a, b = inputs
        xp = get_array_module(b)
        n = b.shape[self.axis]
        s = xp.empty_like(b)
        if n == 0:
            return (s,)
        a_ = xp.moveaxis(a, self.axis, 0)
        b_ = xp.moveaxis(b, self.axis, 0)
        s_ = xp.moveaxis(s, self.axis, 0)
        order = range(n) if self.forward_direction else range(n - 1, -1, -1)
        acc = None
        for i in order:
            if acc is None:
                acc = b_[i].astype(_accumulation_dtype(b.dtype))
            else:
                acc *= a_[i]
                acc += b_[i]
            s_[i] = acc
        return (s,)

    def backward(self, indexes, grad_outputs):
        a = self.get_retained_inputs()[0]
        s = self.get_retained_outputs()[0]
        gs = grad_outputs[0]
        step = 1 if self.forward_direction else -1
        # The adjoint recurrence runs the other way, reading a[i + step].
        t = LinearScan(self.axis, not self.forward_direction).apply(
            (shift(a, self.axis, -step, 0), gs)
        )[0]
        ret = []
        for i in indexes:
            ret.append(t * shift(s, self.axis, step, 0) if i == 0 else t)
        return tuple(ret)


@fill(**DOCS)
def cumprod(x, axis=None):
    """Cumulative product of the elements of ``x`` along ``axis``.

    ``y[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...]`` along ``axis``.
    The gradients are exact where ``x`` has zeros (no division by ``x``).

    {args_cumulative}

    Returns:
        Variable: the cumulative products, of ``x``'s dtype, shaped like ``x``
        (1-D when ``axis`` is None).

    >>> import numpy as np
    >>> cumprod(np.array([1.0, 2.0, 3.0, 4.0], np.float32)).array
    array([ 1.,  2.,  6., 24.], dtype=float32)
    """
    axis = normalize_single_axis(axis, "cumprod")
    if axis is None:
        x = ops.reshape(x, (-1,))
        axis = 0
    return Cumprod(axis).apply((x,))[0]


def exclusive_cumprod(x, axis, reverse=False):
    """Products of the elements strictly before each position along ``axis`` (1 at the start).

    With ``reverse``, of the elements strictly after it. Used by ``prod``'s
    gradient, which must not divide by the input.
    """
    axis %= x.ndim
    y = Cumprod(axis, reverse).apply((x,))[0]
    return shift(y, axis, -1 if reverse else 1, 1)
