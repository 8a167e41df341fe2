"""logsumexp: ``log(sum(exp(x)))`` over axes, without overflow."""

import numpy

from dbr.core import ops
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array
from dbr.functions.math._axes import (
    Reduction,
    kept_shape,
)

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)


class LogSumExp(Reduction):
    """``log(sum(exp(x)))`` over some axes (all by default), shifted by the maximum.

    A second output holds the softmax ``exp(x - y)`` over the same axes: it
    is what the gradient needs, so backward is one multiplication, and as an
    output it stays differentiable (its own gradient reaches ``x``).
    """

    who = "logsumexp"
    nonempty = True

    def forward(self, inputs):
        self.retain_outputs((1,))
        x = inputs[0]
        xp = get_array_module(x)
        m = x.max(axis=self.axis, keepdims=True)
        finite = bool(xp.isfinite(m).all())
        if finite:
            p, s = _shifted_softmax(x, m, self.axis, xp)
            xp.log(s, out=s)
        else:
            # A slice whose maximum is +-inf (or NaN) is shifted by 0 and keeps that value.
            m = xp.where(xp.isfinite(m), m, 0).astype(m.dtype, copy=False)
            with numpy.errstate(divide="ignore", invalid="ignore"):
                p, s = _shifted_softmax(x, m, self.axis, xp)
                xp.log(s, out=s)
        s += m
        y = s if self.keepdims else s.reshape(_reduced_shape(x.shape, self.axis))
        return y.astype(x.dtype, copy=False), p.astype(x.dtype, copy=False)

    def backward(self, indexes, grad_outputs):
        p = self.get_retained_outputs()[0]
        gy, gp = grad_outputs
        shape = kept_shape(p.shape, self.axis)
        g = None if gy is None else ops.reshape(gy, shape)
        if gp is not None:
            # The softmax's own gradient: p * (gp - sum(gp * p)).
            dot = ops.sum(gp * p, axis=self.axis, keepdims=True)
            g = -dot if g is None else g - dot
            return (p * (ops.broadcast_to(g, p.shape) + gp),)
        return (p * ops.broadcast_to(g, p.shape),)


def _shifted_softmax(x, m, axis, xp):
    """Return ``exp(x - m)`` normalized over ``axis`` and its sum before normalizing (keepdims)."""
    if x.dtype == _float16:
        e = x.astype(_float32)
        e -= m
    else:
        e = force_array(x - m)
    xp.exp(e, out=e)
    s = force_array(e.sum(axis=axis, keepdims=True))
    e *= 1 / s
    return e, s


def _reduced_shape(shape, axis):
    ndim = len(shape)
    reduced = range(ndim) if axis is None else [a % ndim for a in axis]
    return tuple([n for i, n in enumerate(shape) if i not in reduced])


def logsumexp(x, axis=None, keepdims=False):
    """Log of the sum of exponentials of the elements of ``x`` over ``axis``.

    .. math::

        y = \\log \\sum_i \\exp(x_i) = m + \\log \\sum_i \\exp(x_i - m),
        \\quad m = \\max_i x_i,

    which never overflows. Slices whose maximum is infinite give that
    infinity. The gradient is the softmax of ``x`` over the same axes.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64; float16 is computed in float32), with at least one
            element along each reduced axis.
        axis (None, int or tuple of int): the axes to reduce (all if None);
            negative values count from the last axis.
        keepdims (bool): keep the reduced axes with length one (an extension
            of Chainer's signature, which has no ``keepdims``).

    Returns:
        Variable: the log-sum-exps, of ``x``'s dtype.

    >>> import numpy as np
    >>> logsumexp(np.array([[0.0, 0.0], [1000.0, 1000.0]]), axis=1).array
    array([6.93147181e-01, 1.00069315e+03])
    """
    return LogSumExp(axis, keepdims).apply((x,))[0]
