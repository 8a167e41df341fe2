"""Bias: adds a learnt (or given) bias broadcast along some axes."""

import dbr.functions as F
from dbr.core import Link, Parameter


class Bias(Link):
    """Adds a bias ``b`` to ``x``, broadcast from ``axis`` on (see :func:`dbr.functions.bias`).

    Args:
        axis (int): the first axis of the input along which the bias is
            applied (default 1).
        shape (int, tuple of ints or None): the shape of the learnt bias
            ``b`` (zeros at first, of ``config.dtype``). None creates no
            parameter: the bias is then given at each call.

    Attributes:
        axis (int): as given.
        b (Parameter): the bias, present only when ``shape`` was given.

    >>> import numpy
    >>> link = Bias(shape=(3,))
    >>> link(numpy.ones((2, 3, 4), numpy.float32)).shape
    (2, 3, 4)
    """

    def __init__(self, axis=1, shape=None):
        super().__init__()
        if shape is not None:
            with self.init_scope():
                self.b = Parameter(0, shape)
        self.axis = axis

    def forward(self, x, y=None):
        """Return ``x + b`` (or ``x + y`` when ``y`` is given), of ``x``'s shape and dtype.

        Args:
            x (Variable or array): the input.
            y (Variable, array or None): the bias to use instead of the
                parameter, of shape ``x.shape[axis:axis + y.ndim]``; it is
                required when the link has no parameter ``b``.
        """
        if y is None:
            try:
                y = self.b
            except AttributeError:
                raise TypeError(
                    "Bias.forward: the link was built with shape=None, so it has no "
                    "parameter b; pass the bias as the second argument y"
                ) from None
        return F.bias(x, y, self.axis)
