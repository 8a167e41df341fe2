"""slstm: the S-LSTM unit, an LSTM for binary trees, as an activation function."""

from dbr.core import FunctionNode, Variable, backend, type_check
from dbr.functions.rnn._cell import CellFunction, GateLayout

_new_variable = Variable.from_array

# x1 and x2 interleave a, i, f, o (as lstm's x); the cell reads blocks a1, i1, a2, i2,
# o1 + o2, f1, f2: each child brings its own cell input and input gate.
_A, _I, _F, _O = range(4)
_LAYOUT = GateLayout(interleaved=False, a=(0, 2), i=(1, 3), o=4, f=(5, 6))


def _interleaved(x):
    return x.reshape((x.shape[0], x.shape[1] // 4, 4) + x.shape[2:])


def _gates(x1, x2):
    """The cell's pre-activations ``[a1, i1, a2, i2, o1 + o2, f1, f2]`` (blocked) as an array."""
    xp = backend.get_array_module(x1)
    r1, r2 = _interleaved(x1), _interleaved(x2)
    n = r1.shape[1]
    pg = xp.empty((x1.shape[0], 7, n) + x1.shape[2:], x1.dtype)
    pg[:, 0] = r1[:, :, _A]
    pg[:, 1] = r1[:, :, _I]
    pg[:, 2] = r2[:, :, _A]
    pg[:, 3] = r2[:, :, _I]
    xp.add(r1[:, :, _O], r2[:, :, _O], out=pg[:, 4])
    pg[:, 5] = r1[:, :, _F]
    pg[:, 6] = r2[:, :, _F]
    return pg.reshape((x1.shape[0], 7 * n) + x1.shape[2:])


class SLSTMGates(FunctionNode):
    """``(x1, x2)`` to the cell's pre-activations ``[a1, i1, a2, i2, o1 + o2, f1, f2]``.

    Linear; its adjoint is :class:`SLSTMGatesGrad`.
    """

    def forward(self, inputs):
        return (_gates(*inputs),)

    def backward(self, indexes, grad_outputs):
        return SLSTMGatesGrad().apply(grad_outputs)


class SLSTMGatesGrad(FunctionNode):
    """The adjoint of :class:`SLSTMGates`: from ``gP`` to ``(gx1, gx2)``."""

    def forward(self, inputs):
        gp = inputs[0]
        xp = backend.get_array_module(gp)
        n = gp.shape[1] // 7
        pg = gp.reshape((gp.shape[0], 7, n) + gp.shape[2:])
        shape = (gp.shape[0], 4 * n) + gp.shape[2:]
        grads = []
        for a_block, i_block, f_block in ((0, 1, 5), (2, 3, 6)):
            g = xp.empty((gp.shape[0], n, 4) + gp.shape[2:], gp.dtype)
            g[:, :, _A] = pg[:, a_block]
            g[:, :, _I] = pg[:, i_block]
            g[:, :, _O] = pg[:, 4]
            g[:, :, _F] = pg[:, f_block]
            grads.append(g.reshape(shape))
        return tuple(grads)

    def backward(self, indexes, grad_outputs):
        g1, g2 = grad_outputs
        if g1 is None:
            g1 = _zeros_like(g2)
        elif g2 is None:
            g2 = _zeros_like(g1)
        return SLSTMGates().apply((g1, g2))


def _zeros_like(v):
    return _new_variable(v.xp.zeros(v.shape, v.dtype), False)


class SLSTM(CellFunction):
    """The S-LSTM cell: inputs ``(c_prev1, c_prev2, x1, x2)``, outputs ``(c, h)``.

    See :func:`slstm`.
    """

    layout = _LAYOUT
    n_cells = 2

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("c_prev1", "c_prev2", "x1", "x2"))
        type_check.expect(in_types.size() == 4)
        c1_type, c2_type, x1_type, x2_type = in_types
        type_check.expect(
            c1_type.dtype.kind == "f",
            c2_type.dtype == c1_type.dtype,
            x1_type.dtype == c1_type.dtype,
            x2_type.dtype == c1_type.dtype,
            c1_type.ndim >= 2,
            c2_type.shape == c1_type.shape,
            x1_type.ndim == c1_type.ndim,
            x2_type.shape == x1_type.shape,
            x1_type.shape[0] == c1_type.shape[0],
            x1_type.shape[1] == 4 * c1_type.shape[1],
        )
        for i in range(2, type_check.eval(c1_type.ndim)):
            type_check.expect(x1_type.shape[i] == c1_type.shape[i])

    def pre_activations(self, xs):
        return _gates(*xs)

    def pre_activations_variable(self, xs):
        return SLSTMGates().apply(xs)[0]

    def x_grads(self, gp, xs):
        return SLSTMGatesGrad().apply((gp,))


def slstm(c_prev1, c_prev2, x1, x2):
    """S-LSTM unit: an LSTM cell merging the states of two children in a binary tree.

    ``x1`` and ``x2`` are laid out as the input of :func:`lstm`: along their
    second axis, unit ``j`` of the gates :math:`a, i, f, o` is at columns
    ``4j`` to ``4j + 3``. With :math:`\\sigma` the logistic sigmoid,

    .. math::
        c = \\tanh(a_1)\\,\\sigma(i_1) + \\tanh(a_2)\\,\\sigma(i_2)
            + c_{\\text{prev}1}\\,\\sigma(f_1) + c_{\\text{prev}2}\\,\\sigma(f_2),
        \\qquad h = \\tanh(c)\\,\\sigma(o_1 + o_2).

    Each child brings its own cell input and input gate, as Chainer computes
    it (its docstring writes :math:`\\tanh(a_1 + a_2)\\,\\sigma(i_1 + i_2)`).

    Args:
        c_prev1 (Variable or array): the cell state of the first child, of
            shape ``(B, N, ...)`` and a floating dtype (float16, float32 or
            float64).
        c_prev2 (Variable or array): that of the second child, of the same
            shape and dtype.
        x1 (Variable or array): the gate pre-activations from the first
            child, of shape ``(B, 4N, ...)`` and the same dtype.
        x2 (Variable or array): those from the second child, like ``x1``.

    Returns:
        tuple: ``(c, h)``, the new cell state and the output, each of shape
        ``(B, N, ...)``.

    >>> import numpy as np
    >>> c1 = np.ones((1, 1), np.float32)
    >>> c2 = np.full((1, 1), 2.0, np.float32)
    >>> x1 = np.array([[0.0, 0.0, 30.0, 15.0]], np.float32)   # a1, i1, f1, o1
    >>> x2 = np.array([[0.0, 0.0, -30.0, 15.0]], np.float32)  # a2, i2, f2, o2
    >>> c, h = slstm(c1, c2, x1, x2)
    >>> c.array, h.array.round(4)
    (array([[1.]], dtype=float32), array([[0.7616]], dtype=float32))
    """
    return SLSTM().apply((c_prev1, c_prev2, x1, x2))
