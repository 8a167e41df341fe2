"""InceptionBN: the Inception module with batch normalization (Inception-v2)."""

import dbr.functions as F
from dbr.core import Chain
from dbr.links._checks import (
    ArgumentAssertionError,
    UnsupportedArgumentError,
    check_size,
    is_int,
)
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.normalization.batch_normalization import BatchNormalization


class InceptionBN(Chain):
    """Inception module with batch normalization (Ioffe and Szegedy, 2015).

    Like :class:`~dbr.links.connection.inception.Inception`, but every
    convolution has no bias and is followed by a
    :class:`~dbr.links.normalization.batch_normalization.BatchNormalization`
    and ReLU, the 5x5 branch is replaced by two 3x3 convolutions, and the
    pooling is max or average. The branches, concatenated along the channel
    axis in this order, are:

    - if ``out1 > 0``: ``conv1`` (1x1 to ``out1``), ``conv1n``, ReLU;
    - ``proj3`` (1x1 to ``proj3``), ``proj3n``, ReLU, ``conv3`` (3x3, pad 1,
      stride ``stride``, to ``out3``), ``conv3n``, ReLU;
    - ``proj33`` (1x1 to ``proj33``), ``proj33n``, ReLU, ``conv33a`` (3x3,
      pad 1, to ``out33``), ``conv33an``, ReLU, ``conv33b`` (3x3, pad 1,
      stride ``stride``, to ``out33``), ``conv33bn``, ReLU;
    - 3x3 pooling (pad 1, stride ``stride``; max pooling without
      ``cover_all``), then, if ``proj_pool`` is given, ``poolp`` (1x1 to
      ``proj_pool``), ``poolpn``, ReLU.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call.
        out1 (int): output channels of the 1x1 branch; 0 drops that branch
            (it must be 0 when ``stride`` is not 1).
        proj3 (int): channels of the projection before the single 3x3
            convolution.
        out3 (int): output channels of the single 3x3 branch.
        proj33 (int): channels of the projection before the double 3x3
            convolutions.
        out33 (int): output channels of the double 3x3 branch.
        pooltype (str): ``'max'`` or ``'avg'``.
        proj_pool (int or None): output channels of the projection after
            the pooling; None (the default) passes the pooled input through,
            with its ``in_channels`` channels. Required when ``out1 > 0``.
        stride (int): stride of the last convolution of each branch and of
            the pooling (default 1).
        conv_init: initializer of every convolution's ``W``; None uses the
            default of :class:`~dbr.links.connection.convolution_2d.Convolution2D`.
        dtype: dtype of the batch normalizations' parameters and statistics;
            None uses ``config.dtype``.

    Input of shape ``(N, in_channels, H, W)``; output of shape ``(N, C, H',
    W')`` with ``C = out1 + out3 + out33 + (proj_pool or in_channels)`` and
    ``H' = (H - 1) // stride + 1`` (likewise ``W'``). In training mode
    (``config.train``) the batch normalizations use the batch statistics and
    update their running averages; in test mode they use the running averages.

    >>> import numpy
    >>> link = InceptionBN(3, 2, 2, 3, 2, 3, "max", proj_pool=2)
    >>> link(numpy.ones((2, 3, 5, 5), numpy.float32)).shape
    (2, 10, 5, 5)
    """

    def __init__(
        self,
        in_channels,
        out1,
        proj3,
        out3,
        proj33,
        out33,
        pooltype,
        proj_pool=None,
        stride=1,
        conv_init=None,
        dtype=None,
    ):
        super().__init__()
        _check_args(out1, proj3, out3, proj33, out33, pooltype, proj_pool, stride)
        self.out1 = out1
        self.proj_pool = proj_pool
        self.stride = stride
        self.pooltype = pooltype
        with self.init_scope():
            self.proj3 = Convolution2D(in_channels, proj3, 1, nobias=True, initialW=conv_init)
            self.conv3 = Convolution2D(
                proj3, out3, 3, stride=stride, pad=1, nobias=True, initialW=conv_init
            )
            self.proj33 = Convolution2D(in_channels, proj33, 1, nobias=True, initialW=conv_init)
            self.conv33a = Convolution2D(proj33, out33, 3, pad=1, nobias=True, initialW=conv_init)
            self.conv33b = Convolution2D(
                out33, out33, 3, stride=stride, pad=1, nobias=True, initialW=conv_init
            )
            self.proj3n = BatchNormalization(proj3, dtype=dtype)
            self.conv3n = BatchNormalization(out3, dtype=dtype)
            self.proj33n = BatchNormalization(proj33, dtype=dtype)
            self.conv33an = BatchNormalization(out33, dtype=dtype)
            self.conv33bn = BatchNormalization(out33, dtype=dtype)
            if out1 > 0:
                self.conv1 = Convolution2D(in_channels, out1, 1, nobias=True, initialW=conv_init)
                self.conv1n = BatchNormalization(out1, dtype=dtype)
            if proj_pool is not None:
                self.poolp = Convolution2D(
                    in_channels, proj_pool, 1, nobias=True, initialW=conv_init
                )
                self.poolpn = BatchNormalization(proj_pool, dtype=dtype)

    def forward(self, x):
        """Apply the branches to ``x`` and concatenate them along the channels.

        Args:
            x (Variable or array): input of shape ``(N, in_channels, H, W)``.

        Returns:
            Variable: of shape ``(N, C, H', W')`` (see the class docstring).
        """
        relu = F.relu
        outs = []
        if self.out1 > 0:
            outs.append(relu(self.conv1n(self.conv1(x))))
        h3 = relu(self.proj3n(self.proj3(x)))
        outs.append(relu(self.conv3n(self.conv3(h3))))
        h33 = relu(self.proj33n(self.proj33(x)))
        h33 = relu(self.conv33an(self.conv33a(h33)))
        outs.append(relu(self.conv33bn(self.conv33b(h33))))
        if self.pooltype == "max":
            p = F.max_pooling_2d(x, 3, stride=self.stride, pad=1, cover_all=False)
        else:
            p = F.average_pooling_2d(x, 3, stride=self.stride, pad=1)
        if self.proj_pool is not None:
            p = relu(self.poolpn(self.poolp(p)))
        outs.append(p)
        return F.concat(outs, axis=1)


def _check_args(out1, proj3, out3, proj33, out33, pooltype, proj_pool, stride):
    """Raise ValueError naming the first bad constructor argument of InceptionBN.

    A bad ``pooltype`` is also a NotImplementedError, and a bad architecture
    (``out1 > 0`` with ``stride != 1`` or no ``proj_pool``) also an
    AssertionError: the types Chainer raises.
    """
    if not is_int(out1) or out1 < 0:
        raise ValueError(f"InceptionBN: out1 must be a non-negative int, got {out1!r}")
    sizes = {"proj3": proj3, "out3": out3, "proj33": proj33, "out33": out33}
    if proj_pool is not None:
        sizes["proj_pool"] = proj_pool
    for arg, value in sizes.items():
        check_size("InceptionBN", arg, value)
    check_size("InceptionBN", "stride", stride)
    if pooltype not in ("max", "avg"):
        raise UnsupportedArgumentError(
            f"InceptionBN: pooltype must be 'max' or 'avg', got {pooltype!r}"
        )
    if out1 > 0 and stride != 1:
        raise ArgumentAssertionError(
            f"InceptionBN: stride must be 1 when out1 > 0, got stride={stride!r}"
        )
    if out1 > 0 and proj_pool is None:
        raise ArgumentAssertionError(
            "InceptionBN: proj_pool must be given when out1 > 0, got None"
        )
