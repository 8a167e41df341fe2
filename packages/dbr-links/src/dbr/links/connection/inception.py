"""Inception: the four-branch module of GoogLeNet."""

import dbr.functions as F
from dbr.core import Chain
from dbr.links._checks import check_size
from dbr.links.connection.convolution_2d import Convolution2D


class Inception(Chain):
    """Inception module of GoogLeNet (Szegedy et al., *Going Deeper with Convolutions*).

    Four branches read the same input and their outputs are concatenated
    along the channel axis, then passed through ReLU:

    - ``conv1``: a 1x1 convolution to ``out1`` channels;
    - ``proj3`` (1x1 to ``proj3``), ReLU, ``conv3`` (3x3, pad 1, to ``out3``);
    - ``proj5`` (1x1 to ``proj5``), ReLU, ``conv5`` (5x5, pad 2, to ``out5``);
    - 3x3 max pooling (stride 1, pad 1), then ``projp`` (1x1 to ``proj_pool``).

    Every branch keeps the spatial size, so the output has the input's batch
    size, height and width and ``out1 + out3 + out5 + proj_pool`` channels.

    Args:
        in_channels (int or None): channels of the input; None infers them
            at the first call.
        out1 (int): output channels of the 1x1 branch.
        proj3 (int): channels of the projection before the 3x3 convolution.
        out3 (int): output channels of the 3x3 branch.
        proj5 (int): channels of the projection before the 5x5 convolution.
        out5 (int): output channels of the 5x5 branch.
        proj_pool (int): output channels of the pooling branch's projection.
        conv_init: initializer of every convolution's ``W`` (an initializer,
            a scalar or an array); None uses the default of
            :class:`~dbr.links.connection.convolution_2d.Convolution2D`.
        bias_init: initializer of every convolution's ``b``; None fills
            them with zeros.

    Input of shape ``(N, in_channels, H, W)`` (float16, float32 or float64);
    output of shape ``(N, out1 + out3 + out5 + proj_pool, H, W)`` and the same
    dtype.

    >>> import numpy
    >>> link = Inception(3, 2, 2, 3, 2, 3, 2)
    >>> link(numpy.zeros((1, 3, 5, 5), numpy.float32)).shape
    (1, 10, 5, 5)
    """

    def __init__(
        self,
        in_channels,
        out1,
        proj3,
        out3,
        proj5,
        out5,
        proj_pool,
        conv_init=None,
        bias_init=None,
    ):
        super().__init__()
        for name, value in (
            ("out1", out1),
            ("proj3", proj3),
            ("out3", out3),
            ("proj5", proj5),
            ("out5", out5),
            ("proj_pool", proj_pool),
        ):
            check_size("Inception", name, value)
        init = {"initialW": conv_init, "initial_bias": bias_init}
        with self.init_scope():
            self.conv1 = Convolution2D(in_channels, out1, 1, **init)
            self.proj3 = Convolution2D(in_channels, proj3, 1, **init)
            self.conv3 = Convolution2D(proj3, out3, 3, pad=1, **init)
            self.proj5 = Convolution2D(in_channels, proj5, 1, **init)
            self.conv5 = Convolution2D(proj5, out5, 5, pad=2, **init)
            self.projp = Convolution2D(in_channels, proj_pool, 1, **init)

    def forward(self, x):
        """Apply the four branches to ``x`` and concatenate them.

        Args:
            x (Variable or array): input of shape ``(N, in_channels, H, W)``.

        Returns:
            Variable: of shape ``(N, out1 + out3 + out5 + proj_pool, H, W)``.
        """
        relu = F.relu
        out1 = self.conv1(x)
        out3 = self.conv3(relu(self.proj3(x)))
        out5 = self.conv5(relu(self.proj5(x)))
        pool = self.projp(F.max_pooling_2d(x, 3, stride=1, pad=1))
        return relu(F.concat((out1, out3, out5, pool), axis=1))
