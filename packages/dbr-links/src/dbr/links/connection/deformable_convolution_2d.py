"""DeformableConvolution2D and the DeformableConvolution2DSampler link it applies."""

import dbr.functions as F
from dbr.core import Chain, Link, initializers
from dbr.links.connection import _conv_args
from dbr.links.connection.convolution_2d import Convolution2D


class DeformableConvolution2D(Chain):
    """Two-dimensional deformable convolution layer.

    A :class:`~dbr.links.connection.convolution_2d.Convolution2D`
    (``offset_conv``) predicts, at every output position, a horizontal and
    a vertical offset for every filter tap (``2 * kh * kw`` channels); a
    :class:`DeformableConvolution2DSampler` (``deform_conv``) then convolves
    the input sampled bilinearly at the shifted taps (see
    :func:`dbr.functions.deformable_convolution_2d_sampler`).

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call.
        out_channels (int): channels of the output.
        ksize (int or pair of ints): filter size ``(kh, kw)`` of both convolutions.
        stride (int or pair of ints): stride of both. Default 1.
        pad (int or pair of ints): zero padding of both. Default 0.
        offset_nobias (bool): if True, ``offset_conv`` has no bias. Default False.
        offset_initialW: initializer of ``offset_conv.W``; None uses
            :class:`~dbr.core.initializers.LeCunNormal`.
        offset_initial_bias: initializer of ``offset_conv.b``; None gives zeros.
        deform_nobias (bool): if True, ``deform_conv`` has no bias. Default False.
        deform_initialW: initializer of ``deform_conv.W``; None gives zeros
            (as in Chainer).
        deform_initial_bias: initializer of ``deform_conv.b``; None gives zeros.

    The input is ``(n, in_channels, h, w)`` (float16, float32 or float64),
    the output ``(n, out_channels, h_O, w_O)`` of that dtype.

    >>> import numpy
    >>> link = DeformableConvolution2D(3, 2, 3, pad=1)
    >>> link(numpy.zeros((1, 3, 5, 5), numpy.float32)).shape
    (1, 2, 5, 5)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize,
        stride=1,
        pad=0,
        offset_nobias=False,
        offset_initialW=None,
        offset_initial_bias=None,
        deform_nobias=False,
        deform_initialW=None,
        deform_initial_bias=None,
    ):
        super().__init__()
        _conv_args.check_ints("DeformableConvolution2D", "ksize", ksize, 2, 1)
        kh, kw = _conv_args.pair(ksize)
        with self.init_scope():
            self.offset_conv = Convolution2D(
                in_channels,
                2 * kh * kw,
                ksize,
                stride,
                pad,
                offset_nobias,
                offset_initialW,
                offset_initial_bias,
            )
            self.deform_conv = DeformableConvolution2DSampler(
                in_channels,
                out_channels,
                ksize,
                stride,
                pad,
                deform_nobias,
                deform_initialW,
                deform_initial_bias,
            )

    def forward(self, x):
        """Apply the deformable convolution to ``x`` of shape ``(n, in_channels, h, w)``."""
        return self.deform_conv(x, self.offset_conv(x))


class DeformableConvolution2DSampler(Link):
    """Convolution of an input sampled at given offsets.

    Holds ``W`` and ``b`` and applies
    :func:`dbr.functions.deformable_convolution_2d_sampler`.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]``.
        out_channels (int): channels of the output.
        ksize (int or pair of ints): filter size ``(kh, kw)``.
        stride (int or pair of ints): stride. Default 1.
        pad (int or pair of ints): zero padding. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        initialW: initializer of ``W``; None gives zeros (as in Chainer).
        initial_bias: initializer of ``b``; None gives zeros.

    Attributes:
        W (Parameter): filter ``(out_channels, in_channels, kh, kw)``.
        b (Parameter or None): bias ``(out_channels,)``.
        ksize (as given); stride, pad (pairs); out_channels (int);
        initialW (the ``initialW`` argument as given).

    Called as ``link(x, offset)`` with ``x`` of shape ``(n, in_channels, h, w)``
    and ``offset`` of shape ``(n, 2 * kh * kw, h_O, w_O)`` (the horizontal
    offsets of the ``kh * kw`` taps, then their vertical ones); returns
    ``(n, out_channels, h_O, w_O)``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize,
        stride=1,
        pad=0,
        nobias=False,
        initialW=None,
        initial_bias=None,
    ):
        super().__init__()
        _conv_args.check_conv_args(
            "DeformableConvolution2DSampler", 2, in_channels, out_channels, ksize, stride, pad
        )
        self.ksize = ksize
        self.stride = _conv_args.pair(stride)
        self.pad = _conv_args.pair(pad)
        self.out_channels = out_channels
        self.initialW = initialW
        if initialW is None:
            initialW = initializers.Zero()
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    def _initialize_params(self, in_channels):
        kh, kw = _conv_args.pair(self.ksize)
        self.W.initialize((self.out_channels, in_channels, kh, kw))

    def forward(self, x, offset):
        """Convolve ``x`` sampled at ``offset``; see the class docstring for shapes."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.deformable_convolution_2d_sampler(
            x, offset, self.W, self.b, self.stride, self.pad
        )
