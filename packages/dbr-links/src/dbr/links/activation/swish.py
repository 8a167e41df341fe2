"""Swish: ``x * sigmoid(beta * x)`` with a learned ``beta``."""

import dbr.functions as F
from dbr.core import Link, Parameter, initializers


class Swish(Link):
    """Swish layer, :func:`dbr.functions.swish` with a learned ``beta``.

    ``y = x * sigmoid(beta * x)``, ``beta`` broadcast along the batch axis
    and the axes after its own.

    Args:
        beta_shape (tuple of ints or None): the shape of ``beta``; None
            infers it from the first input as the shape of one sample
            (``x.shape[1:]``).
        beta_init (float): initial value of every element of ``beta``
            (default 1.0).

    Attributes:
        beta (Parameter): the learned ``beta``.

    >>> import numpy
    >>> s = Swish(None)
    >>> s(numpy.zeros((2, 3), numpy.float32)).shape
    (2, 3)
    >>> s.beta.shape
    (3,)
    """

    def __init__(self, beta_shape, beta_init=1.0):
        super().__init__()
        with self.init_scope():
            self.beta = Parameter(initializers.Constant(beta_init), beta_shape)

    def forward(self, x):
        """Apply swish to ``x`` of shape ``(batch, *beta_shape, ...)``; same shape and dtype."""
        if self.beta.array is None:
            self.beta.initialize(x.shape[1:])
        return F.swish(x, self.beta)
