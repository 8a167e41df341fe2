"""ConvolutionND and its fixed-dimension forms Convolution1D and Convolution3D."""

import functools

import dbr.functions as F
from dbr.core import Link
from dbr.links.connection import _conv_args


class ConvolutionND(Link):
    """N-dimensional convolution layer (see :func:`dbr.functions.convolution_nd`).

    Holds the filter ``W`` and the bias ``b`` and applies
    ``F.convolution_nd(x, W, b, stride, pad, cover_all, dilate, groups)``.

    Args:
        ndim (int): number of spatial axes ``N``.
        in_channels (int or None): channels of the input; None infers them
            at the first call from ``x.shape[1]``. Short form: with ``ksize``
            omitted, ``ConvolutionND(ndim, out_channels, ksize)``.
        out_channels (int): channels of the output.
        ksize (int or tuple of N ints): filter size; ``k`` means ``(k,) * N``.
        stride (int or tuple of N ints): stride. Default 1.
        pad (int or tuple of N ints): zero padding. Default 0.
        nobias (bool): if True, there is no bias (``b`` is None). Default False.
        initialW: initializer of ``W`` (an initializer, a scalar or an
            ``N + 2``-D array); None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.
        cover_all (bool): if True, the output covers every input element,
            adding windows that run over the padded border. Default False.
        dilate (int or tuple of N ints): dilation. Default 1.
        groups (int): number of channel groups; both channel counts must be
            divisible by it. Default 1.

    Attributes:
        W (Parameter): filter ``(out_channels, in_channels // groups, *ksize)``,
            uninitialized until ``in_channels`` is known.
        b (Parameter or None): bias ``(out_channels,)``.
        ksize, dilate (tuples of N ints); stride, pad (as given);
        out_channels (int), cover_all (bool), groups (int).

    The input is ``(n, in_channels, d_1, ..., d_N)`` (float16, float32 or
    float64); the output ``(n, out_channels, o_1, ..., o_N)`` of that dtype.

    >>> import numpy
    >>> link = ConvolutionND(3, 2, 4, 3)
    >>> link(numpy.zeros((1, 2, 5, 6, 7), numpy.float32)).shape
    (1, 4, 3, 4, 5)
    """

    _who = "ConvolutionND"
    _fixed_ndim = None

    def __init__(
        self,
        ndim,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        nobias=False,
        initialW=None,
        initial_bias=None,
        cover_all=False,
        dilate=1,
        groups=1,
    ):
        super().__init__()
        _conv_args.check_channels(self._who, "ndim", ndim)
        in_channels, out_channels, ksize = _conv_args.parse_conv_args(
            self._who, ndim, in_channels, out_channels, ksize, stride, pad, dilate, groups
        )
        self.out_channels = out_channels
        self.ksize = _conv_args.ntuple(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.cover_all = cover_all
        self.dilate = _conv_args.ntuple(dilate, ndim)
        self.groups = int(groups)
        _conv_args.add_weight_and_bias(
            self, initialW, nobias, initial_bias, out_channels, in_channels
        )

    @classmethod
    def from_params(
        cls, W, b=None, stride=1, pad=0, nobias=False, *, cover_all=False, dilate=1, groups=1
    ):
        """A link whose ``W`` and ``b`` start as copies of the given arrays.

        The number of spatial axes, the channel counts and ``ksize`` are read
        from ``W``'s shape; the copies take ``config.dtype``, like any array
        initializer.

        Args:
            W (array or Variable): filter ``(out_channels, in_channels // groups, k_1, ..., k_N)``.
            b (array or Variable or None): bias of ``out_channels`` elements; None
                gives a zero bias unless ``nobias``.
            stride, pad, nobias, cover_all, dilate, groups: as in the constructor.

        Returns:
            ConvolutionND: the link (of the class it is called on).

        Raises:
            ValueError: if ``b``'s size is not ``W``'s ``out_channels``, or if a
                fixed-dimension class (``Convolution1D``, ``Convolution3D``) is
                given a ``W`` of another number of spatial axes.
        """
        W = getattr(W, "array", W)
        b = getattr(b, "array", b)
        out_channels, in_per_group, *ksize = W.shape
        if b is not None and b.size != out_channels:
            raise ValueError(
                f"{cls._who}.from_params: b must have {out_channels} elements (W's "
                f"out_channels), got shape {b.shape}"
            )
        leading = ()
        if cls._fixed_ndim is None:
            leading = (len(ksize),)
        elif len(ksize) != cls._fixed_ndim:
            raise ValueError(
                f"{cls._who}.from_params: W must have {cls._fixed_ndim + 2} axes, got shape "
                f"{W.shape}"
            )
        return cls(
            *leading,
            in_per_group * groups,
            out_channels,
            tuple(ksize),
            stride,
            pad,
            nobias,
            W,
            b,
            cover_all=cover_all,
            dilate=dilate,
            groups=groups,
        )

    def _initialize_params(self, in_channels):
        per_group = _conv_args.channels_per_group(self._who, in_channels, self.groups)
        self.W.initialize((self.out_channels, per_group) + self.ksize)

    def forward(self, x):
        """Convolve ``x`` of shape ``(n, in_channels, d_1, ..., d_N)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return F.convolution_nd(
            x, self.W, self.b, self.stride, self.pad, self.cover_all, self.dilate, self.groups
        )


class Convolution1D(ConvolutionND):
    """One-dimensional convolution layer: :class:`ConvolutionND` with ``ndim=1``.

    Args are :class:`ConvolutionND`'s without ``ndim``; the input is
    ``(n, in_channels, length)``. ``Convolution1D(out_channels, ksize)`` is
    the short form.
    """

    _who = "Convolution1D"
    _fixed_ndim = 1
    __init__ = functools.partialmethod(ConvolutionND.__init__, 1)


class Convolution3D(ConvolutionND):
    """Three-dimensional convolution layer: :class:`ConvolutionND` with ``ndim=3``.

    Args are :class:`ConvolutionND`'s without ``ndim``; the input is
    ``(n, in_channels, d, h, w)``. ``Convolution3D(out_channels, ksize)`` is
    the short form.
    """

    _who = "Convolution3D"
    _fixed_ndim = 3
    __init__ = functools.partialmethod(ConvolutionND.__init__, 3)
