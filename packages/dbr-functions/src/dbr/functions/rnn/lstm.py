"""lstm: the long short-term memory unit as an activation function."""

from dbr.core import type_check
from dbr.functions.rnn._cell import CellFunction, GateLayout

# Chainer's layout: unit j of the gates a, i, f, o is at columns 4j, 4j+1, 4j+2, 4j+3.
_LAYOUT = GateLayout(interleaved=True, a=0, i=1, o=3, f=(2,))


class LSTM(CellFunction):
    """The LSTM cell: inputs ``(c_prev, x)``, outputs ``(c, h)``; see :func:`lstm`."""

    layout = _LAYOUT

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("c_prev", "x"))
        type_check.expect(in_types.size() == 2)
        c_type, x_type = in_types
        type_check.expect(
            c_type.dtype.kind == "f",
            x_type.dtype == c_type.dtype,
            c_type.ndim >= 2,
            x_type.ndim == c_type.ndim,
            x_type.shape[0] <= c_type.shape[0],
            x_type.shape[1] == 4 * c_type.shape[1],
        )
        for i in range(2, type_check.eval(c_type.ndim)):
            type_check.expect(x_type.shape[i] == c_type.shape[i])


def lstm(c_prev, x):
    """Long short-term memory unit with a forget gate.

    ``x`` holds the pre-activations of four gates, interleaved along its
    second axis: for unit ``j``, ``x[:, 4j]`` is the cell input :math:`a`,
    ``x[:, 4j + 1]`` the input gate :math:`i`, ``x[:, 4j + 2]`` the forget gate
    :math:`f` and ``x[:, 4j + 3]`` the output gate :math:`o`. Then

    .. math::
        c = \\tanh(a)\\,\\sigma(i) + c_{\\text{prev}}\\,\\sigma(f), \\qquad
        h = \\tanh(c)\\,\\sigma(o),

    with :math:`\\sigma` the logistic sigmoid. ``x`` may have fewer rows than
    ``c_prev`` (sequences sorted by decreasing length): only ``c[:len(x)]`` is
    updated and the other rows of ``c_prev`` are copied to ``c`` unchanged.

    Args:
        c_prev (Variable or array): the previous cell state, of shape
            ``(B, N, ...)`` and a floating dtype (float16, float32 or float64).
        x (Variable or array): the gate pre-activations, of shape
            ``(B_x, 4N, ...)`` with ``B_x <= B`` and the trailing axes of
            ``c_prev``, of ``c_prev``'s dtype.

    Returns:
        tuple: ``(c, h)``: the new cell state, of ``c_prev``'s shape, and the
        output, of shape ``(B_x, N, ...)``.

    >>> import numpy as np
    >>> c_prev = np.zeros((1, 2), np.float32)
    >>> x = np.array([[1.0, 20.0, 0.0, 20.0, -1.0, 20.0, 0.0, 20.0]], np.float32)
    >>> c, h = lstm(c_prev, x)
    >>> c.array.round(4), h.array.round(4)
    (array([[ 0.7616, -0.7616]], dtype=float32), array([[ 0.642, -0.642]], dtype=float32))
    """
    return LSTM().apply((c_prev, x))
