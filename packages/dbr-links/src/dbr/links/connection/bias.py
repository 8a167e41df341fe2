"""Bias: adds a learnt (or given) bias broadcast along some axes."""

import dbr.functions as F
from dbr.core import Link, Parameter
from dbr.core.utils import docstring_tail
from dbr.links import _checks


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

    Called as ``link(x)`` when it has ``b``, else as ``link(x, y)``.

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

    @docstring_tail(_checks.OPERAND_FORWARD_DOC)
    def forward(self, *xs):
        """Return ``x + b``, or ``x + y`` for a link built without ``shape``.

        Args:
            xs: ``(x,)`` when the link has the parameter ``b``, else ``(x, y)``
                with the bias ``y`` of shape ``x.shape[axis:axis + y.ndim]``.
        """
        x, b = _checks.input_and_operand("Bias.forward", self, "b", xs, "bias", "shape")
        return F.bias(x, b, self.axis)
