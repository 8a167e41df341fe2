"""Per-channel statistics shared by batch, group and layer normalization.

These normalizations compute a mean and a variance per *channel* over every
other axis of ``x``. Viewing ``x`` as a three-axis array ``(A, C, B)`` (the
reduced axes before the channels, the channels, the reduced axes after them)
turns every such reduction into a sum over axes 0 and 2, and every
per-channel coefficient into a ``(C, 1)`` column, whatever the layout of
``x``: NCHW batch normalization is ``(N, C, H*W)``, NHWC is ``(N*H*W, C, 1)``
and the rows of group normalization are ``(1, N*G, K)``. The view is free for
a contiguous ``x`` whose channel axes are adjacent; otherwise it is one copy.
"""

import numpy

from dbr.core import ops
from dbr.core.backend import get_array_module

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)
_float64 = numpy.dtype(numpy.float64)


def compute_dtype(*dtypes):
    """The dtype to compute in: the promotion of ``dtypes``, and at least float32."""
    return numpy.result_type(_float32, *dtypes)


class ChannelLayout:
    """The ``(A, C, B)`` view of an array of ``shape`` whose channel axes are ``key_axes``.

    Attributes:
        shape (tuple of int): the shape of the original array.
        shape3 (tuple of int): ``(A, C, B)``.
        m (int): the number of elements per channel, ``A * B``.
    """

    __slots__ = ("shape", "shape3", "m", "_perm", "_inverse", "_permuted_shape")

    def __init__(self, shape, key_axes):
        self.shape = shape
        ndim = len(shape)
        key = tuple(key_axes)
        reduced = tuple([i for i in range(ndim) if i not in key])
        channels = _prod(shape[i] for i in key)
        self._perm = self._inverse = self._permuted_shape = None
        if not key:
            self.shape3 = (_prod(shape), 1, 1)
        elif key == tuple(range(key[0], key[-1] + 1)):
            self.shape3 = (_prod(shape[: key[0]]), channels, _prod(shape[key[-1] + 1 :]))
        else:
            perm = reduced + key
            self._perm = perm
            self._inverse = tuple([int(i) for i in numpy.argsort(perm)])
            self._permuted_shape = tuple([shape[i] for i in perm])
            self.shape3 = (_prod(shape[i] for i in reduced), channels, 1)
        self.m = self.shape3[0] * self.shape3[2]

    def view(self, x, dtype=None):
        """``x`` as an ``(A, C, B)`` array, cast to ``dtype`` if given."""
        if self._perm is not None:
            x = x.transpose(self._perm)
        x = x.reshape(self.shape3)
        return x if dtype is None else x.astype(dtype, copy=False)

    def restore(self, y3):
        """The inverse of :meth:`view`: an ``(A, C, B)`` array back in the original layout."""
        if self._perm is None:
            return y3.reshape(self.shape)
        y = y3.reshape(self._permuted_shape).transpose(self._inverse)
        return y.copy()

    def view_var(self, x, dtype=None):
        """:meth:`view` for a Variable, differentiably."""
        if self._perm is not None:
            x = ops.transpose(x, self._perm)
        x = ops.reshape(x, self.shape3)
        return x if dtype is None else ops.cast(x, dtype)

    def restore_var(self, y3, dtype=None):
        """:meth:`restore` for a Variable, differentiably."""
        if dtype is not None:
            y3 = ops.cast(y3, dtype)
        if self._perm is None:
            return ops.reshape(y3, self.shape)
        return ops.transpose(ops.reshape(y3, self._permuted_shape), self._inverse)


def channel_sum(a3):
    """The float64 sum of an ``(A, C, B)`` array over axes 0 and 2, shape ``(C,)``.

    Each row of ``B`` contiguous elements is summed in ``a3``'s dtype (NumPy's
    pairwise summation), and the ``A`` row sums are combined in float64.
    """
    if a3.shape[2] == 1:
        return a3[:, :, 0].sum(axis=0, dtype=_float64)
    return a3.sum(axis=2).sum(axis=0, dtype=_float64)


def channel_dot(a3, b3):
    """The float64 ``sum(a3 * b3)`` over axes 0 and 2 in one pass, without a temporary."""
    xp = get_array_module(a3)
    return xp.einsum("acb,acb->ac", a3, b3).sum(axis=0, dtype=_float64)


def needs_centering(mean, var, dtype):
    """Whether the one-pass variance is too inaccurate for data of this mean and variance.

    ``E[x**2] - E[x]**2`` loses about ``mean**2 / var`` times the relative
    precision of the sums; beyond a loss that ``dtype`` cannot afford (a mean
    of about 3 standard deviations in float32), the variance and the
    gradients are computed from the centred data instead.
    """
    limit = 1e-6 / numpy.finfo(dtype).eps
    return bool((mean * mean > limit * var).any())


def moments(x3):
    """The float64 mean and (biased) variance per channel of an ``(A, C, B)`` array.

    One pass over ``x3``: the sums of ``x`` and of ``x ** 2``, from which the
    variance is ``E[x**2] - E[x]**2``. When that is ill-conditioned (see
    :func:`needs_centering`), a second pass recomputes the variance from the
    centred data, which is returned as well (a new array); otherwise the
    third result is None.

    Returns:
        tuple: ``(mean, var, centered)``.
    """
    xp = get_array_module(x3)
    m = x3.shape[0] * x3.shape[2]
    mean = channel_sum(x3)
    mean /= m
    var = channel_dot(x3, x3)
    var /= m
    var -= mean * mean
    xp.maximum(var, 0, out=var)
    if not needs_centering(mean, var, x3.dtype):
        return mean, var, None
    centered = x3 - column(mean, x3.dtype)
    var = channel_dot(centered, centered)
    var /= m
    return mean, var, centered


def column(c, dtype):
    """A per-channel vector as a ``(C, 1)`` column of ``dtype`` (broadcasts over ``(A, C, B)``)."""
    return c.reshape(-1, 1).astype(dtype, copy=False)


def _prod(values):
    n = 1
    for v in values:
        n *= v
    return n
