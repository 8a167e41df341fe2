"""n_step_lstm and n_step_bilstm: stacked LSTMs over sequences of variable length."""

from dbr.core import backend, config
from dbr.functions.array.concat import concat
from dbr.functions.connection.linear import linear, matmul_as
from dbr.functions.rnn import _n_step
from dbr.functions.rnn._cell import CellFunction, GateLayout

# The gates of one layer, blocked along the second axis: o, i, f, a. The sigmoid gates
# (o, i, f) are contiguous, and so are the ones whose gradient scales with that of c (i, f, a).
_LAYOUT = GateLayout(interleaved=False, a=3, i=1, o=0, f=(2,))
_O, _I, _F, _A = range(4)
_ORDER = (3, 0, 1, 2)  # W_3 (o), W_0 (i), W_1 (f), W_2 (a); +4 for the recurrent ones


class NStepLSTMCell(CellFunction):
    """The LSTM cell on blocked pre-activations ``[o, i, f, a]``; inputs are checked upstream."""

    layout = _LAYOUT


class LSTMLayer(_n_step.RecurrentLayer):
    """One direction of one LSTM layer: inputs ``(x, W_x, b_x, h0, c0, W)``, outputs ``(H, h, c)``.

    ``W_x`` is ``[W_3; W_0; W_1; W_2]`` and ``b_x`` the sums of the biases
    (gates o, i, f, a); ``W`` is ``[W_7; W_4; W_5; W_6]``.
    """

    has_cell = True

    def forward_loop(self, inputs):
        p, h0, c0, w = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        xp = backend.get_array_module(p)
        dtype = p.dtype
        total, n = p.shape[0], h0.shape[1]
        h = h0.copy()
        c = c0.copy()
        hs = xp.empty((total, n), dtype)
        acts = xp.empty((total, 4, n), dtype)
        keep = config.enable_backprop
        if keep:
            tanh_cs = xp.empty((total, n), dtype)
            h_prevs = xp.empty((total, n), dtype)
            c_prevs = xp.empty((total, n), dtype)
        for b, rows in self.steps():
            h_prev = h[:b]
            c_prev = c[:b]
            act = acts[rows]
            products.forward(h_prev, p[rows], act.reshape(b, 4 * n))
            _LAYOUT.activate_inplace(act)
            c_new = act[:, _F] * c_prev
            c_new += act[:, _A] * act[:, _I]
            tanh_c = tanh_cs[rows] if keep else xp.empty((b, n), dtype)
            xp.tanh(c_new, out=tanh_c)
            xp.multiply(act[:, _O], tanh_c, out=hs[rows])
            if keep:
                h_prevs[rows] = h_prev
                c_prevs[rows] = c_prev
            h[:b] = hs[rows]
            c[:b] = c_new
        if keep:
            self._saved = acts, tanh_cs, h_prevs, c_prevs
        return hs, h, c

    def backward_loop(self, inputs, grads, indexes):
        _, h0, c0, w = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        g_hs, g_h, g_c = grads
        acts, tanh_cs, h_prevs, c_prevs = self._saved
        xp = backend.get_array_module(acts)
        dtype = acts.dtype
        total, n = acts.shape[0], h0.shape[1]
        one = dtype.type(1)
        o, i, f, a = acts[:, _O], acts[:, _I], acts[:, _F], acts[:, _A]

        # The factors that do not depend on the incoming gradients, for all steps at once:
        # dh/dc = o (1 - tanh(c)^2), and gacts holding d(gate)/d(pre-activation) times
        # tanh(c) for o, a for i, c_prev for f and i for a.
        dh_dc = tanh_cs * tanh_cs
        xp.subtract(one, dh_dc, out=dh_dc)
        dh_dc *= o
        # s (1 - s) of every gate: over the whole contiguous block, which is faster than
        # over the three sigmoid gates' strided view; a's slot is overwritten below.
        gacts = xp.subtract(one, acts)
        gacts *= acts
        gacts[:, _O] *= tanh_cs
        gacts[:, _I] *= a
        gacts[:, _F] *= c_prevs
        ga = gacts[:, _A]
        xp.multiply(a, a, out=ga)
        xp.subtract(one, ga, out=ga)
        ga *= i

        gh = _n_step.zeros_or_copy(xp, g_h, h0.shape, dtype)
        gc = _n_step.zeros_or_copy(xp, g_c, c0.shape, dtype)
        for b, rows in reversed(self.steps()):
            gh_t = gh[:b] if g_hs is None else gh[:b] + g_hs[rows]
            gc_t = gh_t * dh_dc[rows]
            gc_t += gc[:b]
            g = gacts[rows]
            g[:, _O] *= gh_t
            g[:, _I:] *= gc_t[:, None]
            xp.multiply(gc_t, f[rows], out=gc[:b])
            gh[:b] = products.backward(g.reshape(b, 4 * n), dtype)
        gp = gacts.reshape(total, 4 * n)
        gw = matmul_as(gp.T, h_prevs, dtype) if 3 in indexes else None
        return tuple([(gp, gh, gc, gw)[i] for i in indexes])

    def step(self, p_t, h, c, params):
        return NStepLSTMCell().apply((c, p_t + linear(h, params[0])))[::-1]


def _run_layer(x, h0, c0, w, b, batches, reverse):
    w_x = concat([w[j] for j in _ORDER], axis=0)
    w_h = concat([w[j + 4] for j in _ORDER], axis=0)
    bias = concat([b[j] for j in _ORDER], axis=0) + concat([b[j + 4] for j in _ORDER], axis=0)
    return LSTMLayer(batches, reverse).apply((x, w_x, bias, h0, c0, w_h))


def _n_step_lstm(who, directions, n_layers, dropout_ratio, hx, cx, ws, bs, xs, kwargs):
    _n_step.check_kwargs(who, kwargs)
    _n_step.check_inputs(who, n_layers, dropout_ratio, hx, cx, ws, bs, xs, 8, directions)
    return _n_step.n_step(n_layers, dropout_ratio, hx, cx, ws, bs, xs, directions, _run_layer)


def n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs, **kwargs):
    """Stacked uni-directional LSTM over sequences.

    For each layer and time step :math:`t`, with :math:`\\sigma` the logistic
    sigmoid,

    .. math::
        i_t &= \\sigma(W_0 x_t + W_4 h_{t-1} + b_0 + b_4) \\\\
        f_t &= \\sigma(W_1 x_t + W_5 h_{t-1} + b_1 + b_5) \\\\
        a_t &= \\tanh(W_2 x_t + W_6 h_{t-1} + b_2 + b_6) \\\\
        o_t &= \\sigma(W_3 x_t + W_7 h_{t-1} + b_3 + b_7) \\\\
        c_t &= f_t c_{t-1} + i_t a_t \\\\
        h_t &= o_t \\tanh(c_t)

    These are the roles that Chainer's implementation (and cuDNN) gives the
    weights, so that parameters trained with Chainer give the same outputs:
    ``W_2`` is the cell input and ``W_3`` the output gate, the other way round
    from the equations of Chainer's docstring.

    The input :math:`x_t` of layer ``k > 0`` is the output :math:`h_t` of
    layer ``k - 1``, to which dropout is applied (in training mode).
    Sequences of different lengths are given sorted by decreasing length and
    transposed (see :func:`~dbr.functions.transpose_sequence`): ``xs[t]``
    stacks the ``t``-th elements of the sequences longer than ``t``. Each
    layer projects the inputs of all time steps with one matrix product and
    then loops over time with the recurrent product only.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)``.
        hx (Variable or array): the initial hidden states, of shape
            ``(S, B, N)``, float16, float32 or float64.
        cx (Variable or array): the initial cell states, of ``hx``'s shape and
            dtype.
        ws (list of lists of Variables or arrays): ``ws[k]`` holds the eight
            weight matrices ``W_0 .. W_7`` of layer ``k``; ``ws[0][0:4]`` are
            ``(N, I)``-shaped, all the others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[k]`` holds the eight
            ``(N,)``-shaped biases ``b_0 .. b_7`` of layer ``k``.
        xs (list of Variables or arrays): ``xs[t]`` of shape ``(B_t, I)``,
            with ``B_0 <= B`` and ``B_t >= B_{t + 1}``.

    Returns:
        tuple: ``(hy, cy, ys)``: the final hidden and cell states of every
        layer and sequence (of ``hx``'s shape) and the tuple of the last
        layer's outputs, ``ys[t]`` of shape ``(B_t, N)``.

    Raises:
        TypeError, ValueError: ``n_layers``, ``dropout_ratio``, ``ws``, ``bs``
            or ``xs`` are not as described, or a removed argument (``train``,
            ``use_cudnn``) is given.
        InvalidType: an array has the wrong shape or dtype.

    >>> import numpy as np
    >>> n_layers, n_in, n_units = 2, 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (3, 2, 1)]
    >>> hx = np.zeros((n_layers, 3, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if k == 0 and j < 4 else n_units), 0.1, np.float32)
    ...        for j in range(8)] for k in range(n_layers)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(8)] for k in range(n_layers)]
    >>> hy, cy, ys = n_step_lstm(n_layers, 0.0, hx, hx, ws, bs, xs)
    >>> hy.shape, cy.shape, [y.shape for y in ys]
    ((2, 3, 4), (2, 3, 4), [(3, 4), (2, 4), (1, 4)])
    """
    return _n_step_lstm("n_step_lstm", 1, n_layers, dropout_ratio, hx, cx, ws, bs, xs, kwargs)


def n_step_bilstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs, **kwargs):
    """Stacked bi-directional LSTM over sequences.

    Each layer runs one LSTM forward in time and one backward, each with
    its own weights, by the equations of :func:`n_step_lstm`; its output is
    their concatenation :math:`h_t = [h^f_t; h^b_t]`, the input of the next
    layer.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)`` (drawn separately for each direction).
        hx (Variable or array): the initial hidden states, of shape
            ``(2S, B, N)``: ``hx[2k]`` for the forward direction of layer
            ``k`` and ``hx[2k + 1]`` for the backward one.
        cx (Variable or array): the initial cell states, like ``hx``.
        ws (list of lists of Variables or arrays): ``ws[2k + d]`` holds the
            eight weight matrices of direction ``d`` (0 forward, 1 backward)
            of layer ``k``: ``ws[0][0:4]`` and ``ws[1][0:4]`` are
            ``(N, I)``-shaped, ``ws[i][0:4]`` for ``i >= 2`` are
            ``(N, 2N)``-shaped and all the others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[2k + d]`` holds the
            eight ``(N,)``-shaped biases of direction ``d`` of layer ``k``.
        xs (list of Variables or arrays): as for :func:`n_step_lstm`.

    Returns:
        tuple: ``(hy, cy, ys)``: the final states (of ``hx``'s shape; the
        backward direction ends at the first element of each sequence) and
        the last layer's outputs, ``ys[t]`` of shape ``(B_t, 2N)``.

    Raises:
        TypeError, ValueError, InvalidType: as for :func:`n_step_lstm`.

    >>> import numpy as np
    >>> n_in, n_units = 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (2, 1)]
    >>> hx = np.zeros((2, 2, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if j < 4 else n_units), 0.1, np.float32)
    ...        for j in range(8)] for d in range(2)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(8)] for d in range(2)]
    >>> hy, cy, ys = n_step_bilstm(1, 0.0, hx, hx, ws, bs, xs)
    >>> hy.shape, [y.shape for y in ys]
    ((2, 2, 4), [(2, 8), (1, 8)])
    """
    return _n_step_lstm("n_step_bilstm", 2, n_layers, dropout_ratio, hx, cx, ws, bs, xs, kwargs)
