"""n_step_gru and n_step_bigru: stacked GRUs over sequences of variable length."""

import numpy

from dbr.core import backend, config
from dbr.functions.activation.sigmoid import sigmoid
from dbr.functions.activation.tanh import tanh
from dbr.functions.array.concat import concat
from dbr.functions.array.split_axis import split_axis
from dbr.functions.connection.linear import linear, matmul_as
from dbr.functions.rnn import _n_step

_float16 = numpy.dtype(numpy.float16)


class GRULayer(_n_step.RecurrentLayer):
    """One direction of one GRU layer: inputs ``(x, W_x, b_x, h0, W, b)``, outputs ``(H, h)``.

    ``W_x`` is ``[W_0; W_1; W_2]`` and ``b_x`` is ``[b_0; b_1; b_2]`` (blocks r,
    z, n); ``W`` is ``[W_3; W_4; W_5]`` and ``b`` is ``[b_3; b_4; b_5]``.
    """

    has_cell = False

    def forward_loop(self, inputs):
        p, h0, w, b_h = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        xp = backend.get_array_module(p)
        dtype = p.dtype
        total, n = p.shape[0], h0.shape[1]
        half = dtype.type(0.5)
        h = h0.copy()
        hs = xp.empty((total, n), dtype)
        gates = xp.empty((total, 3, n), dtype)
        keep = config.enable_backprop
        if keep:
            h_prevs = xp.empty((total, n), dtype)
            hw_news = xp.empty((total, n), dtype)
        for b, rows in self.steps():
            h_prev = h[:b]
            hw = xp.empty((b, 3 * n), dtype)
            products.forward(h_prev, b_h, hw)
            hw = hw.reshape(b, 3, n)
            pg = p[rows].reshape(b, 3, n)
            g = gates[rows]
            rz = g[:, :2]
            xp.add(pg[:, :2], hw[:, :2], out=rz)
            rz *= half
            xp.tanh(rz, out=rz)  # sigmoid(x) == tanh(x / 2) / 2 + 1/2
            rz *= half
            rz += half
            new = g[:, 2]
            xp.multiply(g[:, 0], hw[:, 2], out=new)
            new += pg[:, 2]
            xp.tanh(new, out=new)
            # h = (1 - z) n + z h_prev
            out = hs[rows]
            xp.subtract(h_prev, new, out=out)
            out *= g[:, 1]
            out += new
            if keep:
                h_prevs[rows] = h_prev
                hw_news[rows] = hw[:, 2]
            h[:b] = out
        if keep:
            self._saved = gates, hw_news, h_prevs
        return hs, h

    def backward_loop(self, inputs, grads, indexes):
        _, h0, w, b_h = inputs
        products = _n_step.StepProducts(w, h0.shape[0])
        g_hs, g_h = grads
        gates, hw_news, h_prevs = self._saved
        xp = backend.get_array_module(gates)
        dtype = gates.dtype
        total, n = gates.shape[0], h0.shape[1]
        one = dtype.type(1)
        r, z, new = gates[:, 0], gates[:, 1], gates[:, 2]

        # The factors that do not depend on the incoming gradients, for all steps at once:
        # gp = gh * [dh/dr_pre, dh/dz_pre, dh/dn_pre] and ghw = gp * [1, 1, r].
        gp = xp.empty((total, 3, n), dtype)
        dr, dz, dn = gp[:, 0], gp[:, 1], gp[:, 2]
        xp.subtract(one, z, out=dn)
        xp.subtract(h_prevs, new, out=dz)
        dz *= z
        dz *= dn  # z (1 - z) (h_prev - n)
        xp.multiply(new, new, out=dr)
        xp.subtract(one, dr, out=dr)
        dn *= dr  # (1 - z) (1 - n^2)
        xp.subtract(one, r, out=dr)
        dr *= r
        dr *= hw_news
        dr *= dn  # (1 - z) (1 - n^2) hw_n r (1 - r)
        scale = xp.ones((total, 3, n), dtype)
        scale[:, 2] = r

        gh = _n_step.zeros_or_copy(xp, g_h, h0.shape, dtype)
        ghw = xp.empty((total, 3, n), dtype)
        for b, rows in reversed(self.steps()):
            gh_t = gh[:b] if g_hs is None else gh[:b] + g_hs[rows]
            gp_t = gp[rows]
            gp_t *= gh_t[:, None]
            ghw_t = ghw[rows]
            xp.multiply(gp_t, scale[rows], out=ghw_t)
            g_prev = gh_t * z[rows]
            g_prev += products.backward(ghw_t.reshape(b, 3 * n), dtype)
            gh[:b] = g_prev
        ghw = ghw.reshape(total, 3 * n)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gp.reshape(total, 3 * n))
            elif i == 1:
                ret.append(gh)
            elif i == 2:
                ret.append(matmul_as(ghw.T, h_prevs, dtype))
            else:
                acc = numpy.float32 if dtype == _float16 else dtype
                ret.append(ghw.sum(axis=0, dtype=acc).astype(dtype, copy=False))
        return tuple(ret)

    def step(self, p_t, h, c, params):
        w, b_h = params
        p_r, p_z, p_n = split_axis(p_t, 3, axis=1)
        h_r, h_z, h_n = split_axis(linear(h, w, b_h), 3, axis=1)
        r = sigmoid(p_r + h_r)
        z = sigmoid(p_z + h_z)
        new = tanh(p_n + r * h_n)
        return new + z * (h - new), None


def _run_layer(x, h0, c0, w, b, batches, reverse):
    w_x, b_x = concat(w[:3], axis=0), concat(b[:3], axis=0)
    return GRULayer(batches, reverse).apply(
        (x, w_x, b_x, h0, concat(w[3:], axis=0), concat(b[3:], axis=0))
    )


def _n_step_gru(who, directions, n_layers, dropout_ratio, hx, ws, bs, xs, kwargs):
    _n_step.check_kwargs(who, kwargs)
    _n_step.check_inputs(who, n_layers, dropout_ratio, hx, None, ws, bs, xs, 6, directions)
    hy, _, ys = _n_step.n_step(
        n_layers, dropout_ratio, hx, None, ws, bs, xs, directions, _run_layer
    )
    return hy, ys


def n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs, **kwargs):
    """Stacked uni-directional gated recurrent units (GRU) over sequences.

    For each layer and time step :math:`t`, with :math:`\\sigma` the logistic
    sigmoid,

    .. math::
        r_t &= \\sigma(W_0 x_t + W_3 h_{t-1} + b_0 + b_3) \\\\
        z_t &= \\sigma(W_1 x_t + W_4 h_{t-1} + b_1 + b_4) \\\\
        h'_t &= \\tanh(W_2 x_t + b_2 + r_t \\cdot (W_5 h_{t-1} + b_5)) \\\\
        h_t &= (1 - z_t) \\cdot h'_t + z_t \\cdot h_{t-1}

    The input :math:`x_t` of layer ``k > 0`` is the output :math:`h_t` of
    layer ``k - 1``, to which dropout is applied (in training mode).
    Sequences of different lengths are given sorted by decreasing length and
    transposed (see :func:`~dbr.functions.transpose_sequence`). Each layer
    projects the inputs of all time steps with one matrix product and then
    loops over time with the recurrent product only.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)``.
        hx (Variable or array): the initial hidden states, of shape
            ``(S, B, N)``, float16, float32 or float64.
        ws (list of lists of Variables or arrays): ``ws[k]`` holds the six
            weight matrices ``W_0 .. W_5`` of layer ``k``; ``ws[0][0:3]`` are
            ``(N, I)``-shaped, all the others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[k]`` holds the six
            ``(N,)``-shaped biases ``b_0 .. b_5`` of layer ``k``.
        xs (list of Variables or arrays): ``xs[t]`` of shape ``(B_t, I)``,
            with ``B_0 <= B`` and ``B_t >= B_{t + 1}``.

    Returns:
        tuple: ``(hy, ys)``: the final hidden states of every layer and
        sequence (of ``hx``'s shape) and the tuple of the last layer's
        outputs, ``ys[t]`` of shape ``(B_t, N)``.

    Raises:
        TypeError, ValueError: ``n_layers``, ``dropout_ratio``, ``ws``, ``bs``
            or ``xs`` are not as described, or a removed argument (``train``,
            ``use_cudnn``) is given.
        InvalidType: an array has the wrong shape or dtype.

    >>> import numpy as np
    >>> n_layers, n_in, n_units = 2, 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (3, 2, 1)]
    >>> hx = np.zeros((n_layers, 3, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if k == 0 and j < 3 else n_units), 0.1, np.float32)
    ...        for j in range(6)] for k in range(n_layers)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(6)] for k in range(n_layers)]
    >>> hy, ys = n_step_gru(n_layers, 0.0, hx, ws, bs, xs)
    >>> hy.shape, [y.shape for y in ys]
    ((2, 3, 4), [(3, 4), (2, 4), (1, 4)])
    """
    return _n_step_gru("n_step_gru", 1, n_layers, dropout_ratio, hx, ws, bs, xs, kwargs)


def n_step_bigru(n_layers, dropout_ratio, hx, ws, bs, xs, **kwargs):
    """Stacked bi-directional gated recurrent units (GRU) over sequences.

    Each layer runs one GRU forward in time and one backward, each with its
    own weights, by the equations of :func:`n_step_gru`; its output is their
    concatenation :math:`h_t = [h^f_t; h^b_t]`, the input of the next layer.

    Args:
        n_layers (int): the number of layers ``S``.
        dropout_ratio (float): the dropout ratio of the inputs of layers after
            the first, in ``[0, 1)`` (drawn separately for each direction).
        hx (Variable or array): the initial hidden states, of shape
            ``(2S, B, N)``: ``hx[2k]`` for the forward direction of layer
            ``k`` and ``hx[2k + 1]`` for the backward one.
        ws (list of lists of Variables or arrays): ``ws[2k + d]`` holds the
            six weight matrices of direction ``d`` (0 forward, 1 backward) of
            layer ``k``: ``ws[0][0:3]`` and ``ws[1][0:3]`` are
            ``(N, I)``-shaped, ``ws[i][0:3]`` for ``i >= 2`` are
            ``(N, 2N)``-shaped and all the others ``(N, N)``-shaped.
        bs (list of lists of Variables or arrays): ``bs[2k + d]`` holds the
            six ``(N,)``-shaped biases of direction ``d`` of layer ``k``.
        xs (list of Variables or arrays): as for :func:`n_step_gru`.

    Returns:
        tuple: ``(hy, ys)``: the final hidden states (of ``hx``'s shape; the
        backward direction ends at the first element of each sequence) and
        the last layer's outputs, ``ys[t]`` of shape ``(B_t, 2N)``.

    Raises:
        TypeError, ValueError, InvalidType: as for :func:`n_step_gru`.

    >>> import numpy as np
    >>> n_in, n_units = 3, 4
    >>> xs = [np.ones((b, n_in), np.float32) for b in (2, 1)]
    >>> hx = np.zeros((2, 2, n_units), np.float32)
    >>> ws = [[np.full((n_units, n_in if j < 3 else n_units), 0.1, np.float32)
    ...        for j in range(6)] for d in range(2)]
    >>> bs = [[np.zeros(n_units, np.float32) for j in range(6)] for d in range(2)]
    >>> hy, ys = n_step_bigru(1, 0.0, hx, ws, bs, xs)
    >>> hy.shape, [y.shape for y in ys]
    ((2, 2, 4), [(2, 8), (1, 8)])
    """
    return _n_step_gru("n_step_bigru", 2, n_layers, dropout_ratio, hx, ws, bs, xs, kwargs)
