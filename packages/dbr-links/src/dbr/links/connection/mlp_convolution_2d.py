"""MLPConvolution2D: the "mlpconv" layer of Network in Network."""

import dbr.functions as F
from dbr.core import ChainList
from dbr.links._checks import is_int
from dbr.links.connection import _conv_args
from dbr.links.connection.convolution_2d import Convolution2D


class MLPConvolution2D(ChainList):
    """Two-dimensional MLP convolution ("mlpconv") of Lin et al., *Network in Network*.

    A convolution with ``ksize``, ``stride`` and ``pad`` followed by 1x1
    convolutions, with ``activation`` between consecutive convolutions (not
    after the last one). The convolutions are the children ``0``, ``1``, ...
    (so the parameters are ``/0/W``, ``/0/b``, ``/1/W``, ...).

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call. With ``ksize`` omitted, the arguments shift:
            ``MLPConvolution2D(out_channels, ksize)`` has ``in_channels`` None.
        out_channels (tuple of ints): output channels of each convolution,
            in order; at least one.
        ksize (int or pair of ints): kernel size of the first convolution.
        stride (int or pair of ints): stride of the first convolution
            (default 1).
        pad (int or pair of ints): padding of the first convolution
            (default 0).
        activation (callable): applied between the convolutions (default
            :func:`dbr.functions.relu`).
        conv_init: initializer of every convolution's ``W``; None uses the
            default of :class:`~dbr.links.connection.convolution_2d.Convolution2D`.
            Keyword only.
        bias_init: initializer of every convolution's ``b``; None fills
            them with zeros. Keyword only.

    Chainer v1's ``wscale`` is refused, as Chainer v7 refuses it: as a
    seventh positional argument with TypeError, by keyword with ValueError.

    Attributes:
        activation (callable): the activation between the convolutions.

    Input of shape ``(N, in_channels, H, W)``; output of shape ``(N,
    out_channels[-1], H', W')`` where ``H'``, ``W'`` are the first
    convolution's output sizes.

    >>> import numpy
    >>> link = MLPConvolution2D(3, (4, 5), 3)
    >>> link(numpy.zeros((2, 3, 6, 6), numpy.float32)).shape
    (2, 5, 4, 4)
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        ksize=None,
        stride=1,
        pad=0,
        activation=F.relu,
        *args,
        conv_init=None,
        bias_init=None,
        **kwargs,
    ):
        _refuse_wscale(args, kwargs)
        in_channels, out_channels, ksize = _conv_args.short_form(in_channels, out_channels, ksize)
        try:
            out_channels = tuple(out_channels)
        except TypeError:
            raise TypeError(
                f"MLPConvolution2D: out_channels must be a sequence of ints, got {out_channels!r}"
            ) from None
        if not out_channels:
            raise ValueError("MLPConvolution2D: out_channels must hold at least one int, got ()")
        for n in out_channels:
            if not is_int(n) or n <= 0:
                raise ValueError(
                    f"MLPConvolution2D: out_channels must hold positive ints, got {out_channels!r}"
                )
        init = {"initialW": conv_init, "initial_bias": bias_init}
        convs = [Convolution2D(in_channels, out_channels[0], ksize, stride, pad, **init)]
        for n_in, n_out in zip(out_channels, out_channels[1:]):
            convs.append(Convolution2D(n_in, n_out, 1, **init))
        super().__init__(*convs)
        self.activation = activation

    def forward(self, x):
        """Apply the convolutions to ``x``, with the activation between them.

        Args:
            x (Variable or array): input of shape ``(N, in_channels, H, W)``.

        Returns:
            Variable: of shape ``(N, out_channels[-1], H', W')``.
        """
        f = self.activation
        *hidden, last = self
        for conv in hidden:
            x = f(conv(x))
        return last(x)


def _refuse_wscale(args, kwargs):
    hint = "set the scale of the initial parameters with conv_init and bias_init instead"
    if args:
        raise TypeError(
            f"MLPConvolution2D: expected at most 6 positional arguments (the 7th was wscale in "
            f"Chainer v1, no longer supported: {hint}), got {6 + len(args)}"
        )
    if "wscale" in kwargs:
        raise ValueError(f"MLPConvolution2D: the wscale argument is not supported anymore; {hint}")
    if kwargs:
        names = ", ".join(sorted(kwargs))
        raise TypeError(f"MLPConvolution2D: got unexpected keyword argument(s) {names}")
