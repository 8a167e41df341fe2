"""DeconvolutionND and its fixed-dimension forms Deconvolution1D and Deconvolution3D."""

import functools

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class DeconvolutionND(Link):
    """N-dimensional deconvolution layer (see :func:`dbr.functions.deconvolution_nd`).

    Holds the filter ``W`` and the bias ``b`` and applies
    ``F.deconvolution_nd(x, W, b, stride, pad, outsize, dilate, groups)``.

    Args:
        ndim (int): number of spatial axes ``N``.
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]``. Short form: with ``ksize``
            omitted, ``DeconvolutionND(ndim, out_channels, ksize)``.
        out_channels (int): channels of the output.
        ksize (int or tuple of N ints): filter size.
        stride (int or tuple of N ints): stride. Default 1.
        pad (int or tuple of N ints): padding cropped from the output. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        outsize (tuple of N ints or None): output spatial size; None gives
            the smallest, ``s (d - 1) + (k - 1) dil + 1 - 2 p`` per axis.
        initialW: initializer of ``W``; None uses
            :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.
        dilate (int or tuple of N ints): dilation. Default 1.
        groups (int): number of channel groups. Default 1.

    Attributes:
        W (Parameter): filter ``(in_channels, out_channels // groups, *ksize)``,
            uninitialized until ``in_channels`` is known.
        b (Parameter or None): bias ``(out_channels,)``.
        ksize, dilate (tuples of N ints); stride, pad, outsize (as given);
        out_channels (int), groups (int).

    The input is ``(n, in_channels, d_1, ..., d_N)`` (float16, float32 or
    float64), the output ``(n, out_channels, o_1, ..., o_N)`` of that dtype.

    >>> import numpy
    >>> link = DeconvolutionND(3, 2, 4, 3)
    >>> link(numpy.zeros((1, 2, 3, 4, 5), numpy.float32)).shape
    (1, 4, 5, 6, 7)
    """

    _who = "DeconvolutionND"

    def __init__(
        self,
        ndim,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        nobias=False,
        outsize=None,
        initialW=None,
        initial_bias=None,
        dilate=1,
        groups=1,
    ):
        super().__init__()
        _conv_args.check_channels(self._who, "ndim", ndim)
        in_channels, out_channels, ksize = _conv_args.parse_conv_args(
            self._who, ndim, in_channels, out_channels, ksize, stride, pad, dilate, groups
        )
        if outsize is not None:
            _conv_args.check_ints(self._who, "outsize", outsize, ndim, 1)
        self.out_channels = out_channels
        self.ksize = _conv_args.ntuple(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.outsize = outsize
        self.dilate = _conv_args.ntuple(dilate, ndim)
        self.groups = int(groups)
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    def _initialize_params(self, in_channels):
        _conv_args.channels_per_group(self._who, in_channels, self.groups)
        self.W.initialize((in_channels, self.out_channels // self.groups) + self.ksize)

    def forward(self, x):
        """Deconvolve ``x`` of shape ``(n, in_channels, d_1, ..., d_N)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.deconvolution_nd(
            x, self.W, self.b, self.stride, self.pad, self.outsize, self.dilate, self.groups
        )


class Deconvolution1D(DeconvolutionND):
    """One-dimensional deconvolution layer: :class:`DeconvolutionND` with ``ndim=1``.

    Args are :class:`DeconvolutionND`'s without ``ndim``; the input is
    ``(n, in_channels, length)``.
    """

    _who = "Deconvolution1D"
    __init__ = functools.partialmethod(DeconvolutionND.__init__, 1)


class Deconvolution3D(DeconvolutionND):
    """Three-dimensional deconvolution layer: :class:`DeconvolutionND` with ``ndim=3``.

    Args are :class:`DeconvolutionND`'s without ``ndim``; the input is
    ``(n, in_channels, d, h, w)``.
    """

    _who = "Deconvolution3D"
    __init__ = functools.partialmethod(DeconvolutionND.__init__, 3)
