"""prod: products of elements over axes, with a gradient exact at zeros."""

import numpy

from dbr.core import ops
from dbr.core.utils import force_array
from dbr.functions.math._axes import (
    Reduction,
    kept_shape,
    positive_axes,
)
from dbr.functions.math.cumprod import exclusive_cumprod

_float16 = numpy.dtype(numpy.float16)


class Prod(Reduction):
    """The product of the elements over some axes (all by default)."""

    who = "prod"

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        if x.dtype == _float16:
            y = x.prod(axis=self.axis, dtype=numpy.float32, keepdims=self.keepdims)
            return (force_array(y.astype(_float16)),)
        return (force_array(x.prod(axis=self.axis, keepdims=self.keepdims)),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        ndim = x.ndim
        axes = positive_axes(self.axis, ndim)
        gy = ops.broadcast_to(ops.reshape(grad_outputs[0], kept_shape(x.shape, axes)), x.shape)
        if not axes:
            return (gy,)
        return (_product_of_others(x, axes) * gy,)


def _product_of_others(x, axes):
    """For each element, the product of the other elements of its reduction over ``axes``.

    Computed from the products before and after it (exclusive cumulative
    products), so no division by ``x`` is needed.
    """
    if len(axes) == 1:
        a = axes[0]
        return exclusive_cumprod(x, a) * exclusive_cumprod(x, a, reverse=True)
    ndim = x.ndim
    kept = tuple(a for a in range(ndim) if a not in axes)
    perm = axes + kept
    xt = ops.transpose(x, perm) if perm != tuple(range(ndim)) else x
    n = 1
    for a in axes:
        n *= x.shape[a]
    flat = ops.reshape(xt, (n,) + tuple(x.shape[a] for a in kept))
    others = exclusive_cumprod(flat, 0) * exclusive_cumprod(flat, 0, reverse=True)
    others = ops.reshape(others, xt.shape)
    if perm == tuple(range(ndim)):
        return others
    return ops.transpose(others, tuple(numpy.argsort(perm).tolist()))


def prod(x, axis=None, keepdims=False):
    """Product of the elements of ``x`` over ``axis``.

    The gradient of each element is the product of the others in its
    reduction (times the output gradient), computed without dividing by the
    element, so it is exact where ``x`` has zeros; so are higher orders.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64; float16 is accumulated in float32).
        axis (None, int or tuple of int): the axes to multiply over (all if
            None); negative values count from the last axis.
        keepdims (bool): keep the reduced axes with length one.

    Returns:
        Variable: the products, of ``x``'s dtype.

    >>> import numpy as np
    >>> prod(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=1).array
    array([ 2., 12.], dtype=float32)
    """
    return Prod(axis, keepdims).apply((x,))[0]
