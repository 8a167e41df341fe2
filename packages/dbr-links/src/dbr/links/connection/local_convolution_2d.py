"""LocalConvolution2D: a 2-d convolution with unshared weights."""

import dbr.functions as F
from dbr.core import Link
from dbr.links._checks import check_size, is_int
from dbr.links.connection import _conv_args


def _pair(value, name, allow_none=False):
    """``value`` (an int or a pair of ints) as a pair of positive ints."""
    if value is None and allow_none:
        return None
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2 or not all(is_int(v) and v > 0 for v in pair):
        raise ValueError(
            f"LocalConvolution2D: {name} must be a positive int or a pair of positive ints, "
            f"got {value!r}"
        )
    return pair


class LocalConvolution2D(Link):
    """Two-dimensional local convolution: every output location has its own filters.

    See :func:`dbr.functions.local_convolution_2d`. There is no padding; the
    output size is ``(h - kh) // sy + 1`` by ``(w - kw) // sx + 1``.

    Args:
        in_channels (int or None): the number of input channels.
        out_channels (int): the number of output channels.
        in_size (int, pair of ints or None): the input's height and width
            (``k`` means ``(k, k)``). If it or ``in_channels`` is None, the
            parameters are created at the first call, from the input.
        ksize (int or pair of ints): the filter size (required).
        stride (int or pair of ints): the stride (default 1).
        nobias (bool): if True, there is no bias (``b`` is None).
        initialW: initializer of ``W``; None uses
            :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.

    Attributes:
        in_channels, out_channels, in_size, ksize, stride, nobias: as given
            (``stride`` as a pair).
        W (Parameter): filters of shape
            ``(out_channels, out_h, out_w, in_channels, kh, kw)``.
        b (Parameter or None): bias of shape ``(out_channels, out_h, out_w)``.

    >>> import numpy
    >>> link = LocalConvolution2D(3, 4, in_size=7, ksize=3)
    >>> link(numpy.ones((2, 3, 7, 7), numpy.float32)).shape
    (2, 4, 5, 5)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        in_size=None,
        ksize=None,
        stride=1,
        nobias=False,
        initialW=None,
        initial_bias=None,
    ):
        super().__init__()
        check_size("LocalConvolution2D", "in_channels", in_channels, allow_none=True)
        check_size("LocalConvolution2D", "out_channels", out_channels)
        kh, kw = _pair(ksize, "ksize")
        self.stride = _pair(stride, "stride")
        in_pair = _pair(in_size, "in_size", allow_none=True)
        if in_pair is not None and (in_pair[0] < kh or in_pair[1] < kw):
            raise ValueError(
                f"LocalConvolution2D: in_size must be at least ksize {(kh, kw)}, got {in_size!r}"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.in_size = in_size
        self.ksize = ksize
        self.nobias = nobias
        _conv_args.add_weight_and_bias(self, initialW, nobias, initial_bias, None)
        if in_channels is not None and in_pair is not None:
            self._initialize_params(in_channels, in_pair)

    def _initialize_params(self, in_channels, in_size):
        kh, kw = _pair(self.ksize, "ksize")
        sy, sx = self.stride
        out_h = (in_size[0] - kh) // sy + 1
        out_w = (in_size[1] - kw) // sx + 1
        self.W.initialize((self.out_channels, out_h, out_w, in_channels, kh, kw))
        if self.b is not None:
            self.b.initialize((self.out_channels, out_h, out_w))

    def forward(self, x):
        """Apply the layer to ``x`` of shape ``(n, in_channels, h, w)``.

        Returns:
            Variable: of shape ``(n, out_channels, out_h, out_w)`` and ``x``'s dtype.
        """
        if self.W.array is None:
            in_channels = x.shape[1] if self.in_channels is None else self.in_channels
            in_size = x.shape[2:] if self.in_size is None else _pair(self.in_size, "in_size")
            self._initialize_params(in_channels, in_size)
        return F.local_convolution_2d(x, self.W, self.b, self.stride)
