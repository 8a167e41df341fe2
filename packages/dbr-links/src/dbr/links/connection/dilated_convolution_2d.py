"""DilatedConvolution2D: the two-dimensional dilated convolution layer."""

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class DilatedConvolution2D(Link):
    """Two-dimensional dilated convolution layer (:func:`dbr.functions.dilated_convolution_2d`).

    Holds the filter ``W`` and the bias ``b`` and applies
    ``F.dilated_convolution_2d(x, W, b, stride, pad, dilate)``.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]``. Short form: with ``ksize``
            omitted, ``DilatedConvolution2D(out_channels, ksize)``.
        out_channels (int): channels of the output.
        ksize (int or pair of ints): filter size ``(kh, kw)``.
        stride (int or pair of ints): stride. Default 1.
        pad (int or pair of ints): zero padding. Default 0.
        dilate (int or pair of ints): dilation ``(dy, dx)``. Default 1.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        initialW: initializer of ``W``; None uses
            :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.

    Attributes:
        W (Parameter): filter ``(out_channels, in_channels, kh, kw)``.
        b (Parameter or None): bias ``(out_channels,)``.
        ksize, stride, pad, dilate (pairs of ints); out_channels (int).

    The input is ``(n, in_channels, h, w)`` (float16, float32 or float64),
    the output ``(n, out_channels, h_O, w_O)`` of that dtype, with
    ``h_O = (h + 2 ph - (kh - 1) dy - 1) // sy + 1``.

    >>> import numpy
    >>> link = DilatedConvolution2D(3, 2, 3, dilate=2)
    >>> link(numpy.zeros((1, 3, 7, 7), numpy.float32)).shape
    (1, 2, 3, 3)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        dilate=1,
        nobias=False,
        initialW=None,
        initial_bias=None,
    ):
        super().__init__()
        in_channels, out_channels, ksize = _conv_args.parse_conv_args(
            "DilatedConvolution2D", 2, in_channels, out_channels, ksize, stride, pad, dilate
        )
        self.ksize = _conv_args.pair(ksize)
        self.stride = _conv_args.pair(stride)
        self.pad = _conv_args.pair(pad)
        self.dilate = _conv_args.pair(dilate)
        self.out_channels = out_channels
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    def _initialize_params(self, in_channels):
        kh, kw = self.ksize
        self.W.initialize((self.out_channels, in_channels, kh, kw))

    def forward(self, x):
        """Convolve ``x`` ``(n, in_channels, h, w)`` into ``(n, out_channels, h_O, w_O)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.dilated_convolution_2d(x, self.W, self.b, self.stride, self.pad, self.dilate)
