"""Deconvolution2D: the two-dimensional transposed convolution layer."""

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class Deconvolution2D(Link):
    """Two-dimensional deconvolution layer (see :func:`dbr.functions.deconvolution_2d`).

    Holds the filter ``W`` and the bias ``b`` and applies
    ``F.deconvolution_2d(x, W, b, stride, pad, outsize, dilate=dilate, groups=groups)``,
    the transpose of a convolution.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]``. Short form: with ``ksize``
            omitted, ``Deconvolution2D(out_channels, ksize)`` (the later
            arguments then by keyword).
        out_channels (int): channels of the output.
        ksize (int or pair of ints): filter size ``(kh, kw)``.
        stride (int or pair of ints): stride ``(sy, sx)``. Default 1.
        pad (int or pair of ints): padding ``(ph, pw)`` cropped from the output. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        outsize (pair of ints or None): output size ``(h_O, w_O)``; None gives
            the smallest, ``h_O = sy (h - 1) + (kh - 1) dy + 1 - 2 ph``.
        initialW: initializer of ``W`` (an initializer, a scalar or a 4-D
            array); None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.
        dilate (int or pair of ints): dilation; keyword only. Default 1.
        groups (int): number of channel groups; keyword only. Default 1.

    Attributes:
        W (Parameter): filter ``(in_channels, out_channels // groups, kh, kw)``,
            uninitialized until ``in_channels`` is known.
        b (Parameter or None): bias ``(out_channels,)``.
        ksize (as given); stride, pad, dilate (pairs); outsize (pair or None);
        out_channels (int), groups (int).

    The input is ``(n, in_channels, h, w)`` (float16, float32 or float64),
    the output ``(n, out_channels, h_O, w_O)`` of that dtype.

    >>> import numpy
    >>> link = Deconvolution2D(3, 2, 4, stride=2, pad=1)
    >>> link(numpy.zeros((1, 3, 5, 5), numpy.float32)).shape
    (1, 2, 10, 10)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        nobias=False,
        outsize=None,
        initialW=None,
        initial_bias=None,
        *,
        dilate=1,
        groups=1,
    ):
        super().__init__()
        in_channels, out_channels, ksize = _conv_args.parse_conv_args(
            "Deconvolution2D", 2, in_channels, out_channels, ksize, stride, pad, dilate, groups
        )
        if outsize is not None:
            _conv_args.check_ints("Deconvolution2D", "outsize", outsize, 2, 1)
        self.ksize = ksize
        self.stride = _conv_args.pair(stride)
        self.pad = _conv_args.pair(pad)
        self.dilate = _conv_args.pair(dilate)
        self.outsize = outsize
        self.out_channels = out_channels
        self.groups = int(groups)
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    def _initialize_params(self, in_channels):
        _conv_args.channels_per_group("Deconvolution2D", in_channels, self.groups)
        kh, kw = _conv_args.pair(self.ksize)
        self.W.initialize((in_channels, self.out_channels // self.groups, kh, kw))

    def forward(self, x):
        """Deconvolve ``x`` ``(n, in_channels, h, w)`` into ``(n, out_channels, h_O, w_O)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.deconvolution_2d(
            x,
            self.W,
            self.b,
            self.stride,
            self.pad,
            self.outsize,
            dilate=self.dilate,
            groups=self.groups,
        )
