"""tree_lstm: the N-ary TreeLSTM unit as an activation function."""

from dbr.core import type_check
from dbr.functions.rnn._cell import CellFunction, GateLayout

_LAYOUTS = {}


def _layout(n_cells):
    # Blocks a, i, o, f_1 .. f_n along the second axis.
    layout = _LAYOUTS.get(n_cells)
    if layout is None:
        layout = _LAYOUTS[n_cells] = GateLayout(
            interleaved=False, a=0, i=1, o=2, f=tuple(range(3, 3 + n_cells))
        )
    return layout


class TreeLSTM(CellFunction):
    """The TreeLSTM cell: inputs ``(c_1, ..., c_n, x)``, outputs ``(c, h)``; see :func:`tree_lstm`.

    Args:
        n_cells (int): the number of children ``n``.
    """

    def __init__(self, n_cells):
        self.n_cells = n_cells
        self.layout = _layout(n_cells)

    def check_type_forward(self, in_types):
        n = self.n_cells
        type_check.argname(in_types, tuple(f"c{k + 1}" for k in range(n)) + ("x",))
        type_check.expect(in_types.size() == n + 1)
        x_type = in_types[n]
        for c_type in in_types[:n]:
            type_check.expect(
                c_type.dtype.kind == "f",
                x_type.dtype == c_type.dtype,
                c_type.ndim >= 2,
                x_type.ndim == c_type.ndim,
                x_type.shape[0] == c_type.shape[0],
                x_type.shape[1] == (3 + n) * c_type.shape[1],
            )
            for i in range(2, type_check.eval(c_type.ndim)):
                type_check.expect(x_type.shape[i] == c_type.shape[i])


def tree_lstm(*inputs):
    """TreeLSTM unit for N-ary and Child-Sum TreeLSTMs.

    The inputs are the cell states :math:`c_1, \\dots, c_N` of the children
    and the pre-activations ``x``, whose second axis holds ``3 + N`` blocks
    of the cell's width, in order :math:`a, i, o, f_1, \\dots, f_N` (block
    ``k`` is ``x[:, k * W:(k + 1) * W]`` for cells of width ``W``). Then

    .. math::
        c = \\tanh(a)\\,\\sigma(i) + \\sum_{n=1}^{N} c_n\\,\\sigma(f_n), \\qquad
        h = \\tanh(c)\\,\\sigma(o),

    with :math:`\\sigma` the logistic sigmoid.

    Args:
        *inputs (Variables or arrays): ``c_1, ..., c_N, x``: each ``c_n`` of
            shape ``(B, W, ...)`` and a floating dtype (float16, float32 or
            float64); ``x`` of shape ``(B, (3 + N) W, ...)`` and the same dtype.

    Returns:
        tuple: ``(c, h)``, the new cell state and the output, each of shape
        ``(B, W, ...)``.

    >>> import numpy as np
    >>> c1 = np.ones((1, 1), np.float32)
    >>> c2 = np.full((1, 1), 2.0, np.float32)
    >>> x = np.array([[0.0, 0.0, 30.0, 30.0, -30.0]], np.float32)  # a, i, o, f1, f2
    >>> c, h = tree_lstm(c1, c2, x)
    >>> c.array, h.array.round(4)
    (array([[1.]], dtype=float32), array([[0.7616]], dtype=float32))
    """
    if len(inputs) < 2:
        raise TypeError(
            f"tree_lstm: expected at least two inputs (c_1, ..., c_N, x), got {len(inputs)}"
        )
    return TreeLSTM(len(inputs) - 1).apply(inputs)
