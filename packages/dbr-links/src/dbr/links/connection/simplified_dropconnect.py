"""SimplifiedDropconnect: a fully-connected layer regularised by simplified DropConnect."""

import numpy

import dbr.functions as F
from dbr.core import Link, initializers
from dbr.links._checks import check_size
from dbr.links.connection.linear import add_linear_params


class SimplifiedDropconnect(Link):
    """Fully-connected layer whose weights are randomly dropped in training.

    In training each weight is dropped with probability ``ratio`` and the
    kept ones are scaled by ``1 / (1 - ratio)``; in test mode this is a
    plain linear layer (see :func:`dbr.functions.simplified_dropconnect`).
    Like Chainer's, it averages before the activation, unlike the original
    paper's Gaussian sampling after it.

    Args:
        in_size (int or None): the size of each input sample; None infers
            it at the first call (the product of the axes after the first).
        out_size (int): the size of each output sample.
        ratio (float): the probability of dropping a weight (default 0.5).
        nobias (bool): if True, there is no bias (``b`` is None).
        initialW: initializer of ``W``; None uses
            ``HeNormal(1 / sqrt(2))`` (a normal of variance ``1 / in_size``).
        initial_bias: initializer of ``b``; None fills it with zeros.

    Attributes:
        out_size (int), ratio (float): as given.
        W (Parameter): the weight, of shape ``(out_size, in_size)``.
        b (Parameter or None): the bias, of shape ``(out_size,)``.

    >>> import numpy
    >>> link = SimplifiedDropconnect(3, 2)
    >>> link(numpy.ones((4, 3), numpy.float32), train=False).shape
    (4, 2)
    """

    def __init__(
        self, in_size, out_size, ratio=0.5, nobias=False, initialW=None, initial_bias=None
    ):
        super().__init__()
        check_size("SimplifiedDropconnect", "in_size", in_size, True)
        check_size("SimplifiedDropconnect", "out_size", out_size, False)
        if not 0.0 <= ratio < 1.0:
            raise ValueError(f"SimplifiedDropconnect: ratio must be in [0, 1), got {ratio!r}")
        self.out_size = out_size
        self.ratio = ratio
        if initialW is None:
            initialW = initializers.HeNormal(1.0 / numpy.sqrt(2))
        add_linear_params(self, initialW, nobias, initial_bias, in_size, out_size)

    def _initialize_params(self, in_size):
        self.W.initialize((self.out_size, in_size))

    def forward(self, x, train=True, mask=None, use_batchwise_mask=True):
        """Apply the layer.

        Args:
            x (Variable or array): input of shape ``(n, ...)`` whose axes
                after the first hold ``in_size`` elements.
            train (bool): whether to drop weights; as in Chainer this
                argument alone decides (``config.train`` is not read), and
                False makes the link a plain linear layer.
            mask (array or None): a fixed mask, True where a weight is kept,
                of shape ``(n, out_size, in_size)`` or ``(out_size, in_size)``
                (mainly for debugging); None draws one.
            use_batchwise_mask (bool): draw one mask per sample rather than
                one for the whole batch.

        Returns:
            Variable: of shape ``(n, out_size)`` and ``x``'s dtype.
        """
        if self.W.array is None:
            self._initialize_params(x.size // x.shape[0])
        return F.simplified_dropconnect(
            x, self.W, self.b, self.ratio, train, mask, use_batchwise_mask
        )
