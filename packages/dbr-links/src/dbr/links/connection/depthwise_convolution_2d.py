"""DepthwiseConvolution2D: the two-dimensional depthwise convolution layer."""

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class DepthwiseConvolution2D(Link):
    """Depthwise 2-D convolution layer (:func:`dbr.functions.depthwise_convolution_2d`).

    Each input channel is convolved with its own ``channel_multiplier``
    filters, giving ``channel_multiplier * in_channels`` output channels.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]`` (``W`` and ``b`` stay
            uninitialized until then).
        channel_multiplier (int): filters per input channel.
        ksize (int or pair of ints): filter size ``(kh, kw)``.
        stride (int or pair of ints): stride. Default 1.
        pad (int or pair of ints): zero padding. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        initialW: initializer of ``W``; None uses
            :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.

    Attributes:
        W (Parameter): filter ``(channel_multiplier, in_channels, kh, kw)``.
        b (Parameter or None): bias ``(channel_multiplier * in_channels,)``.
        ksize (as given); stride, pad (pairs); channel_multiplier (int).

    The input is ``(n, in_channels, h, w)`` (float16, float32 or float64),
    the output ``(n, channel_multiplier * in_channels, h_O, w_O)`` of that dtype.

    >>> import numpy
    >>> link = DepthwiseConvolution2D(3, 2, 3)
    >>> link(numpy.zeros((1, 3, 5, 5), numpy.float32)).shape
    (1, 6, 3, 3)
    """

    def __init__(
        self,
        in_channels,
        channel_multiplier,
        ksize,
        stride=1,
        pad=0,
        nobias=False,
        initialW=None,
        initial_bias=None,
    ):
        super().__init__()
        who = "DepthwiseConvolution2D"
        _conv_args.check_channels(who, "in_channels", in_channels, allow_none=True)
        _conv_args.check_channels(who, "channel_multiplier", channel_multiplier)
        _conv_args.check_ints(who, "ksize", ksize, 2, 1)
        _conv_args.check_ints(who, "stride", stride, 2, 1)
        _conv_args.check_ints(who, "pad", pad, 2, 0)
        self.ksize = ksize
        self.stride = _conv_args.pair(stride)
        self.pad = _conv_args.pair(pad)
        self.channel_multiplier = channel_multiplier
        _conv_args.add_weight_and_bias(self, initialW, nobias, initial_bias, None, in_channels)

    def _initialize_params(self, in_channels):
        kh, kw = _conv_args.pair(self.ksize)
        self.W.initialize((self.channel_multiplier, in_channels, kh, kw))
        if self.b is not None:
            self.b.initialize(self.channel_multiplier * in_channels)

    def forward(self, x):
        """Convolve ``x`` of shape ``(n, in_channels, h, w)`` channel by channel."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)
