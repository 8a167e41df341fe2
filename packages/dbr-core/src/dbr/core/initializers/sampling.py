"""Initializers that write fixed resampling filters into convolution kernels."""

import numpy

from dbr.core import backend
from dbr.core.initializers.initializer import Initializer

_INTERPOLATIONS = ("linear",)


def linear_filter(size, ndim, normalize):
    """The separable (bi/tri)linear interpolation kernel of ``size`` taps per axis.

    Along each axis, tap ``i`` weighs ``1 - |i - center| / factor`` with
    ``factor = (size + 1) // 2`` and ``center = factor - 1`` for an odd
    ``size``, ``factor - 1/2`` for an even one; the kernel is the product of
    its axes' weights (FCN's upsampling filter, Long et al.).

    Args:
        size (int): taps per axis, >= 1.
        ndim (int): number of axes.
        normalize (bool): divide by the sum, so that the weights add up to 1.

    Returns:
        numpy.ndarray: float64, of shape ``(size,) * ndim``.
    """
    factor = (size + 1) // 2
    center = factor - 1.0 if size % 2 == 1 else factor - 0.5
    taps = 1.0 - numpy.abs(numpy.arange(size) - center) / factor
    kernel = numpy.ones((size,) * ndim)
    for axis in range(ndim):
        kernel = kernel * taps.reshape((size,) + (1,) * (ndim - 1 - axis))
    if normalize:
        kernel /= kernel.sum()
    return kernel


class _SamplingFilter(Initializer):
    """Writes one resampling kernel per channel into an ``(a, b, k, ..., k)`` array.

    Every element is zeroed, then ``array[i, i]`` (``b == a``) or
    ``array[i, 0]`` (``b == 1``) receives the kernel for each ``i < a``.
    """

    _normalize = False

    def __init__(self, interpolation="linear", dtype=None):
        super().__init__(dtype)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(
                f"{type(self).__name__}: interpolation must be one of {_INTERPOLATIONS}, "
                f"got {interpolation!r}"
            )
        self.interpolation = interpolation

    def _fill(self, array):
        who = type(self).__name__
        if array.ndim < 3:
            raise ValueError(
                f"{who}: expected a kernel of shape (a, b, k, ..., k) with at least one "
                f"spatial axis, got shape {array.shape}"
            )
        a, b = array.shape[:2]
        if b not in (a, 1):
            raise ValueError(
                f"{who}: expected the second axis to be the first's length or 1, got "
                f"shape {array.shape}"
            )
        sizes = array.shape[2:]
        if any(k != sizes[0] for k in sizes):
            raise ValueError(f"{who}: expected equal spatial sizes, got shape {array.shape}")
        xp = backend.get_array_module(array)
        array[...] = 0
        if array.size == 0:
            return
        kernel = linear_filter(sizes[0], len(sizes), self._normalize)
        kernel = backend.get_device_from_array(array).send(kernel.astype(array.dtype))
        channels = xp.arange(a)
        array[channels, channels if b == a else 0] = kernel


class UpsamplingDeconvFilter(_SamplingFilter):
    """Fills a deconvolution kernel with per-channel (bi/tri)linear upsampling.

    For a kernel of shape ``(a, b, k, ..., k)`` with ``b == a`` or ``b == 1``
    (such as a :class:`~dbr.links.DeconvolutionND`'s ``W`` of shape
    ``(in_channels, out_channels, k, ...)``), every element is zeroed and
    channel ``i``'s own kernel, ``W[i, i]`` (``W[i, 0]`` when ``b == 1``),
    becomes the linear interpolation filter: along each axis, tap ``j``
    weighs ``1 - |j - center| / f`` with ``f = (k + 1) // 2`` and ``center =
    f - 1`` (``k`` odd) or ``f - 1/2`` (``k`` even), and the kernel is the
    product over the axes. With ``stride = (k + 1) // 2`` the deconvolution
    upsamples each channel by linear interpolation (Long et al.,
    https://arxiv.org/abs/1411.4038).

    Args:
        interpolation (str): only ``'linear'``.
        dtype: The dtype the initializer is meant for, or None for any.

    Raises:
        ValueError: another ``interpolation``; or, when called, an array with
            no spatial axis, with a second axis neither the first's length
            nor 1, or with unequal spatial sizes.

    >>> import numpy
    >>> w = numpy.empty((1, 1, 4), numpy.float32)
    >>> UpsamplingDeconvFilter()(w)
    >>> w
    array([[[0.25, 0.75, 0.75, 0.25]]], dtype=float32)
    """


class DownsamplingConvFilter(_SamplingFilter):
    """Fills a convolution kernel with per-channel (bi/tri)linear downsampling.

    The kernel of :class:`UpsamplingDeconvFilter` divided by its sum, so that
    its weights add up to 1, written the same way into an array of shape
    ``(a, b, k, ..., k)`` with ``b == a`` or ``b == 1`` (such as a
    :class:`~dbr.links.ConvolutionND`'s ``W`` of shape ``(out_channels,
    in_channels, k, ...)``): every element is zeroed and ``W[i, i]``
    (``W[i, 0]`` when ``b == 1``) receives the filter. With ``stride = (k +
    1) // 2`` the convolution downsamples each channel by a weighted average
    (Long et al., https://arxiv.org/abs/1411.4038).

    Args:
        interpolation (str): only ``'linear'``.
        dtype: The dtype the initializer is meant for, or None for any.

    Raises:
        ValueError: another ``interpolation``; or, when called, an array with
            no spatial axis, with a second axis neither the first's length
            nor 1, or with unequal spatial sizes.

    >>> import numpy
    >>> w = numpy.empty((1, 1, 3), numpy.float32)
    >>> DownsamplingConvFilter()(w)
    >>> w
    array([[[0.25, 0.5 , 0.25]]], dtype=float32)
    """

    _normalize = True
