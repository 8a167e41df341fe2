"""n_step_rnn and n_step_birnn: stacked Elman RNNs (tanh or ReLU) over sequences."""

from dbr.core import backend, config
from dbr.functions.activation.relu import relu
from dbr.functions.activation.tanh import tanh
from dbr.functions.connection.linear import linear, matmul_as
from dbr.functions.rnn import _n_step

_ACTIVATIONS = ("tanh", "relu")


class RNNLayer(_n_step.RecurrentLayer):
    """One direction of one RNN layer: inputs ``(x, W_0, b_0 + b_1, h0, W_1)``, outputs ``(H, h)``.

    Args:
        batches, reverse: as for :class:`~dbr.functions.rnn._n_step.RecurrentLayer`.
        activation (str): ``'tanh'`` or ``'relu'``.
    """

    has_cell = False

    def __init__(self, batches, reverse, activation):
        super().__init__(batches, reverse)
        self.activation = activation

    def forward_loop(self, inputs):
        p, h0, w = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        xp = backend.get_array_module(p)
        dtype = p.dtype
        total, n = p.shape[0], h0.shape[1]
        h = h0.copy()
        hs = xp.empty((total, n), dtype)
        keep = config.enable_backprop
        if keep:
            h_prevs = xp.empty((total, n), dtype)
        is_tanh = self.activation == "tanh"
        zero = dtype.type(0)
        for b, rows in self.steps():
            h_prev = h[:b]
            out = hs[rows]
            products.forward(h_prev, p[rows], out)
            if is_tanh:
                xp.tanh(out, out=out)
            else:
                xp.maximum(out, zero, out=out)
            if keep:
                h_prevs[rows] = h_prev
            h[:b] = out
        if keep:
            self._saved = hs, h_prevs
        return hs, h

    def backward_loop(self, inputs, grads, indexes):
        _, h0, w = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        g_hs, g_h = grads
        hs, h_prevs = self._saved
        xp = backend.get_array_module(hs)
        dtype = hs.dtype
        one = dtype.type(1)
        gh = _n_step.zeros_or_copy(xp, g_h, h0.shape, dtype)
        # the derivative of the activation at every step, then scaled step by step
        if self.activation == "tanh":
            gz = hs * hs
            xp.subtract(one, gz, out=gz)
        else:
            gz = xp.empty(hs.shape, dtype)
            xp.greater(hs, 0, out=gz)
        for b, rows in reversed(self.steps()):
            g = gz[rows]
            g *= gh[:b] if g_hs is None else gh[:b] + g_hs[rows]
            gh[:b] = products.backward(g, dtype)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gz)
            elif i == 1:
                ret.append(gh)
            else:
                ret.append(matmul_as(gz.T, h_prevs, dtype))
        return tuple(ret)

    def step(self, p_t, h, c, params):
        z = p_t + linear(h, params[0])
        return (tanh(z) if self.activation == "tanh" else relu(z)), None


def _n_step_rnn(who, directions, n_layers, dropout_ratio, hx, ws, bs, xs, activation, kwargs):
    _n_step.check_kwargs(who, kwargs)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{who}: expected activation to be 'tanh' or 'relu', got {activation!r}")
    _n_step.check_inputs(who, n_layers, dropout_ratio, hx, None, ws, bs, xs, 2, directions)

    def run_layer(x, h0, c0, w, b, batches, reverse):
        return RNNLayer(batches, reverse, activation).apply((x, w[0], b[0] + b[1], h0, w[1]))

    hy, _, ys = _n_step.n_step(
        n_layers, dropout_ratio, hx, None, ws, bs, xs, directions, run_layer
    )
    return hy, ys


def n_step_rnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation="tanh", **kwargs):
    """Stacked uni-directional Elman RNN over sequences.

    For each layer and time step :math:`t`,

    .. math::
        h_t = f(W_0 x_t + W_1 h_{t-1} + b_0 + b_1)

    with :math:`f` the activation, ``tanh`` or ``relu``. The input
    :math:`x_t` of layer ``k > 0`` is the output :math:`h_t` of layer
    ``k - 1``, to which dropout is applied (in training mode). Sequences of
    different lengths are given sorted by decreasing length and transposed
    (see :func:`~dbr.functions.transpose_sequence`). Each layer projects the
    inputs of all time steps with one matrix product and then loops over time
    with the recurrent product only.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)``.
        hx (Variable or array): the initial hidden states, of shape
            ``(S, B, N)``, float16, float32 or float64.
        ws (list of lists of Variables or arrays): ``ws[k]`` holds the two
            weight matrices ``W_0, W_1`` of layer ``k``; ``ws[0][0]`` is
            ``(N, I)``-shaped, all the others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[k]`` holds the two
            ``(N,)``-shaped biases ``b_0, b_1`` of layer ``k``.
        xs (list of Variables or arrays): ``xs[t]`` of shape ``(B_t, I)``,
            with ``B_0 <= B`` and ``B_t >= B_{t + 1}``.
        activation (str): ``'tanh'`` or ``'relu'``.

    Returns:
        tuple: ``(hy, ys)``: the final hidden states of every layer and
        sequence (of ``hx``'s shape) and the tuple of the last layer's
        outputs, ``ys[t]`` of shape ``(B_t, N)``.

    Raises:
        TypeError, ValueError: ``n_layers``, ``dropout_ratio``, ``ws``, ``bs``,
            ``xs`` or ``activation`` are not as described, or a removed
            argument (``train``, ``use_cudnn``) is given.
        InvalidType: an array has the wrong shape or dtype.

    >>> import numpy as np
    >>> n_layers, n_in, n_units = 2, 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (3, 2, 1)]
    >>> hx = np.zeros((n_layers, 3, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if k == 0 and j == 0 else n_units), 0.1, np.float32)
    ...        for j in range(2)] for k in range(n_layers)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(2)] for k in range(n_layers)]
    >>> hy, ys = n_step_rnn(n_layers, 0.0, hx, ws, bs, xs, activation="relu")
    >>> hy.shape, [y.shape for y in ys]
    ((2, 3, 4), [(3, 4), (2, 4), (1, 4)])
    """
    return _n_step_rnn(
        "n_step_rnn", 1, n_layers, dropout_ratio, hx, ws, bs, xs, activation, kwargs
    )


def n_step_birnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation="tanh", **kwargs):
    """Stacked bi-directional Elman RNN over sequences.

    Each layer runs one RNN forward in time and one backward, each with its
    own weights, by the equation of :func:`n_step_rnn`; its output is their
    concatenation :math:`h_t = [h^f_t; h^b_t]`, the input of the next layer.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)`` (drawn separately for each direction).
        hx (Variable or array): the initial hidden states, of shape
            ``(2S, B, N)``: ``hx[2k]`` for the forward direction of layer
            ``k`` and ``hx[2k + 1]`` for the backward one.
        ws (list of lists of Variables or arrays): ``ws[2k + d]`` holds the two
            weight matrices of direction ``d`` (0 forward, 1 backward) of layer
            ``k``: ``ws[0][0]`` and ``ws[1][0]`` are ``(N, I)``-shaped,
            ``ws[i][0]`` for ``i >= 2`` are ``(N, 2N)``-shaped and all the
            others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[2k + d]`` holds the two
            ``(N,)``-shaped biases of direction ``d`` of layer ``k``.
        xs (list of Variables or arrays): as for :func:`n_step_rnn`.
        activation (str): ``'tanh'`` or ``'relu'``.

    Returns:
        tuple: ``(hy, ys)``: the final hidden states (of ``hx``'s shape; the
        backward direction ends at the first element of each sequence) and
        the last layer's outputs, ``ys[t]`` of shape ``(B_t, 2N)``.

    Raises:
        TypeError, ValueError, InvalidType: as for :func:`n_step_rnn`.

    >>> import numpy as np
    >>> n_in, n_units = 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (2, 1)]
    >>> hx = np.zeros((2, 2, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if j == 0 else n_units), 0.1, np.float32)
    ...        for j in range(2)] for d in range(2)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(2)] for d in range(2)]
    >>> hy, ys = n_step_birnn(1, 0.0, hx, ws, bs, xs)
    >>> hy.shape, [y.shape for y in ys]
    ((2, 2, 4), [(2, 8), (1, 8)])
    """
    return _n_step_rnn(
        "n_step_birnn", 2, n_layers, dropout_ratio, hx, ws, bs, xs, activation, kwargs
    )
