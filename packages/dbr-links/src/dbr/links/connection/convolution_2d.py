"""Convolution2D: the two-dimensional convolution layer."""

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class Convolution2D(Link):
    """Two-dimensional convolution layer (see :func:`dbr.functions.convolution_2d`).

    Holds the filter ``W`` and the bias ``b`` and applies
    ``F.convolution_2d(x, W, b, stride, pad, dilate=dilate, groups=groups)``.

    Args:
        in_channels (int or None): channels of the input. None infers them
            at the first call from ``x.shape[1]``. Short form: with ``ksize``
            omitted the two arguments given are ``out_channels`` and
            ``ksize``, so ``Convolution2D(7, 3)`` is
            ``Convolution2D(None, 7, 3)`` (the later arguments must then be
            given by keyword).
        out_channels (int): channels of the output.
        ksize (int or pair of ints): filter size ``(kh, kw)``; ``k`` means ``(k, k)``.
        stride (int or pair of ints): stride ``(sy, sx)``. Default 1.
        pad (int or pair of ints): zero padding ``(ph, pw)``. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        initialW: initializer of ``W`` (an initializer, a scalar or a 4-D
            array); None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b`` (an initializer, a scalar or a
            1-D array); None fills it with zeros.
        dilate (int or pair of ints): dilation ``(dy, dx)``; keyword only. Default 1.
        groups (int): number of channel groups; both channel counts must be
            divisible by it; keyword only. Default 1.

    Attributes:
        W (Parameter): filter of shape ``(out_channels, in_channels // groups, kh, kw)``,
            uninitialized until ``in_channels`` is known.
        b (Parameter or None): bias of shape ``(out_channels,)``.
        ksize (int or pair of ints): as given.
        stride, pad, dilate (pairs of ints): as given, an int ``v`` kept as ``(v, v)``.
        out_channels (int), groups (int).

    The input is ``(n, in_channels, h, w)`` (float16, float32 or float64)
    and the output ``(n, out_channels, h_O, w_O)`` of the same dtype, with
    ``h_O = (h + 2 ph - (kh - 1) dy - 1) // sy + 1`` (likewise ``w_O``).

    >>> import numpy
    >>> link = Convolution2D(7, 5)
    >>> link(numpy.zeros((1, 3, 10, 10), numpy.float32)).shape
    (1, 7, 6, 6)
    >>> link.W.shape
    (7, 3, 5, 5)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        nobias=False,
        initialW=None,
        initial_bias=None,
        *,
        dilate=1,
        groups=1,
    ):
        super().__init__()
        in_channels, out_channels, ksize = _conv_args.parse_conv_args(
            "Convolution2D", 2, in_channels, out_channels, ksize, stride, pad, dilate, groups
        )
        self.ksize = ksize
        self.stride = _conv_args.pair(stride)
        self.pad = _conv_args.pair(pad)
        self.dilate = _conv_args.pair(dilate)
        self.out_channels = out_channels
        self.groups = int(groups)
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    @classmethod
    def from_params(cls, W, b=None, stride=1, pad=0, nobias=False, *, dilate=1, groups=1):
        """A Convolution2D whose ``W`` and ``b`` start as copies of the given arrays.

        The copies take ``config.dtype``, like any array initializer.

        Args:
            W (array or Variable): filter ``(out_channels, in_channels // groups, kh, kw)``.
            b (array or Variable or None): bias ``(out_channels,)``; None gives a
                zero bias unless ``nobias``.
            stride, pad, nobias, dilate, groups: as in the constructor.

        Returns:
            Convolution2D: the link, its options read from ``W``'s shape.
        """
        W = getattr(W, "array", W)
        b = getattr(b, "array", b)
        out_channels, in_per_group, kh, kw = W.shape
        if b is not None and b.shape != (out_channels,):
            raise ValueError(
                f"Convolution2D.from_params: b must have shape ({out_channels},), got {b.shape}"
            )
        return cls(
            in_per_group * groups,
            out_channels,
            (kh, kw),
            stride,
            pad,
            nobias,
            W,
            b,
            dilate=dilate,
            groups=groups,
        )

    def _initialize_params(self, in_channels):
        per_group = _conv_args.channels_per_group("Convolution2D", in_channels, self.groups)
        kh, kw = _conv_args.pair(self.ksize)
        self.W.initialize((self.out_channels, per_group, kh, kw))

    def forward(self, x):
        """Convolve ``x`` ``(n, in_channels, h, w)`` into ``(n, out_channels, h_O, w_O)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.convolution_2d(
            x, self.W, self.b, self.stride, self.pad, dilate=self.dilate, groups=self.groups
        )
