"""Scale: multiplies by a learnt (or given) scale, optionally adding a bias."""

import dbr.functions as F
from dbr.core import Chain, Parameter
from dbr.core.utils import docstring_tail
from dbr.links import _checks
from dbr.links.connection.bias import Bias


class Scale(Chain):
    """Multiplies ``x`` by ``W`` broadcast from ``axis`` on, then optionally adds a bias.

    See :func:`dbr.functions.scale` and :class:`Bias`.

    Args:
        axis (int): the first axis of the input along which the scale (and
            the bias) apply (default 1).
        W_shape (int, tuple of ints or None): the shape of the learnt scale
            ``W`` (ones at first, of ``config.dtype``). None creates no
            parameter: the scale is then given at each call.
        bias_term (bool): whether to add a learnt bias, held by the child
            link ``bias`` (a :class:`Bias`).
        bias_shape (int, tuple of ints or None): the shape of the bias when
            ``W_shape`` is None (required then if ``bias_term``); with
            ``W_shape`` given, the bias has ``W_shape``.

    Attributes:
        axis (int): as given.
        W (Parameter): the scale, present only when ``W_shape`` was given.
        bias (Bias): the bias link, present only with ``bias_term``.

    Called as ``link(x)`` when it has ``W``, else as ``link(x, y)``.

    >>> import numpy
    >>> link = Scale(W_shape=(3,), bias_term=True)
    >>> link(numpy.ones((2, 3), numpy.float32)).shape
    (2, 3)
    """

    def __init__(self, axis=1, W_shape=None, bias_term=False, bias_shape=None):
        super().__init__()
        self.axis = axis
        if bias_term:
            if W_shape is not None:
                bias_shape = W_shape
            elif bias_shape is None:
                raise ValueError(
                    "Scale: bias_shape must be given when bias_term is True and "
                    "W_shape is None, got bias_shape=None"
                )
        with self.init_scope():
            if W_shape is not None:
                self.W = Parameter(1, W_shape)
            if bias_term:
                self.bias = Bias(axis, bias_shape)

    @docstring_tail(_checks.OPERAND_FORWARD_DOC)
    def forward(self, *xs):
        """Return ``x * W (+ b)``, or ``x * y (+ b)`` for a link built without ``W_shape``.

        Args:
            xs: ``(x,)`` when the link has the parameter ``W``, else ``(x, y)``
                with the scale ``y`` of shape ``x.shape[axis:axis + y.ndim]``.
        """
        x, W = _checks.input_and_operand("Scale.forward", self, "W", xs, "scale", "W_shape")
        z = F.scale(x, W, self.axis)
        return self.bias(z) if hasattr(self, "bias") else z
