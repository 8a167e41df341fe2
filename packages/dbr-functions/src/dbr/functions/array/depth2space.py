"""depth2space: move blocks of channels into spatial neighbourhoods (pixel shuffle).

The two rearrangements are each other's inverse and gradient, so both nodes
live here; space2depth's module holds its wrapper.
"""

import operator

from dbr.core import FunctionNode, type_check


def check_block_size(r, who):
    """Return ``r`` as an int >= 1, or raise naming ``who``."""
    try:
        r = operator.index(r)
    except TypeError:
        raise TypeError(f"{who}: expected r to be an int, got {r!r}") from None
    if r < 1:
        raise ValueError(f"{who}: expected r >= 1, got {r}")
    return r


def depth_to_space(x, r):
    """Array-level depth2space: ``(n, r*r*c, h, w)`` to ``(n, c, h*r, w*r)``."""
    n, crr, h, w = x.shape
    c = crr // (r * r)
    y = x.reshape(n, r, r, c, h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c, h * r, w * r)


def space_to_depth(x, r):
    """Array-level space2depth: ``(n, c, h*r, w*r)`` to ``(n, r*r*c, h, w)``."""
    n, c, hr, wr = x.shape
    h, w = hr // r, wr // r
    y = x.reshape(n, c, h, r, w, r).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, r * r * c, h, w)


class _BlockRearrange(FunctionNode):
    """A rearrangement of 4-d ``x`` by blocks of size ``r``, whose gradient is its inverse's."""

    def __init__(self, r):
        self.r = r

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("X",))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim == 4, *self._divisible(x_type))

    def forward(self, inputs):
        return (self._rearrange(inputs[0], self.r),)

    def backward(self, indexes, grad_outputs):
        return self._inverse()(self.r).apply(grad_outputs)


class Depth2Space(_BlockRearrange):
    """Rearrange ``(n, r*r*c, h, w)`` into ``(n, c, h*r, w*r)``."""

    _rearrange = staticmethod(depth_to_space)

    def _divisible(self, x_type):
        return (x_type.shape[1] % (self.r * self.r) == 0,)

    @staticmethod
    def _inverse():
        return Space2Depth


class Space2Depth(_BlockRearrange):
    """Rearrange ``(n, c, h*r, w*r)`` into ``(n, r*r*c, h, w)``."""

    _rearrange = staticmethod(space_to_depth)

    def _divisible(self, x_type):
        return (x_type.shape[2] % self.r == 0, x_type.shape[3] % self.r == 0)

    @staticmethod
    def _inverse():
        return Depth2Space


def depth2space(X, r):
    """Move channel blocks into spatial blocks: ``(n, r*r*c, h, w)`` to ``(n, c, h*r, w*r)``.

    ``y[b, k, i*r + p, j*r + q] = X[b, (p*r + q)*c + k, i, j]`` for
    ``0 <= p, q < r``: the channels are read as an ``(r, r, c)`` block, the
    layout of TensorFlow's ``depth_to_space``. It is the inverse of
    :func:`~dbr.functions.array.space2depth.space2depth`, which is also its
    gradient.

    Args:
        X (Variable or array): input of shape ``(n, r*r*c, h, w)``, floating.
        r (int): the block size (``r >= 1``).

    Returns:
        Variable: of shape ``(n, c, h*r, w*r)`` and ``X``'s dtype.

    >>> import numpy as np
    >>> X = np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
    >>> depth2space(X, 2).array
    array([[[[ 0.,  6.,  1.,  7.,  2.,  8.],
             [12., 18., 13., 19., 14., 20.],
             [ 3.,  9.,  4., 10.,  5., 11.],
             [15., 21., 16., 22., 17., 23.]]]], dtype=float32)
    """
    return Depth2Space(check_block_size(r, "depth2space")).apply((X,))[0]
