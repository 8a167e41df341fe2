"""PReLU: the parametric rectified linear unit with learned slopes."""

import dbr.functions as F
from dbr.core import Link, Parameter


class PReLU(Link):
    """Parametric ReLU layer, :func:`dbr.functions.prelu` with a learned slope ``W``.

    ``y = x`` where ``x >= 0`` and ``W * x`` elsewhere; ``W`` of shape
    ``shape`` is broadcast along the batch axis and the axes after it.

    Args:
        shape (tuple of ints): the shape of ``W``, the leading axes of one
            sample (``()``, the default, is one slope shared by every unit).
        init (float or initializer): initial value of ``W`` (default 0.25).

    Attributes:
        W (Parameter): the slopes.

    Input ``x`` of shape ``(batch, *shape, ...)`` and the dtype of ``W``;
    the output has its shape and dtype.

    >>> import numpy
    >>> PReLU()(numpy.array([[-2.0, 2.0]], numpy.float32)).array
    array([[-0.5,  2. ]], dtype=float32)
    """

    def __init__(self, shape=(), init=0.25):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(init, shape)

    def forward(self, x):
        """Apply the parametric ReLU to ``x``."""
        return F.prelu(x, self.W)
