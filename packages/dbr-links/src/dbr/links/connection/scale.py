"""Scale: multiplies by a learnt (or given) scale, optionally adding a bias."""

import dbr.functions as F
from dbr.core import Chain, Parameter
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
        bias (Bias or None): the bias link, None without ``bias_term``.

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
        if not bias_term:
            self.bias = None

    def forward(self, x, y=None):
        """Return ``x * W (+ b)``, or ``x * y (+ b)`` when ``y`` is given.

        Args:
            x (Variable or array): the input.
            y (Variable, array or None): the scale to use instead of the
                parameter, of shape ``x.shape[axis:axis + y.ndim]``; it is
                required when the link has no parameter ``W``.

        Returns:
            Variable: of ``x``'s shape and dtype.
        """
        if y is None:
            try:
                y = self.W
            except AttributeError:
                raise TypeError(
                    "Scale.forward: the link was built with W_shape=None, so it has no "
                    "parameter W; pass the scale as the second argument y"
                ) from None
        z = F.scale(x, y, self.axis)
        bias = self.bias
        return z if bias is None else bias(z)
