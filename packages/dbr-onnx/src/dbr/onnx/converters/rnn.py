"""Converters of the recurrent cells (lstm, slstm, tree_lstm) and of the layers of the n-step
RNNs."""

from dbr.onnx.converters._util import Chain


def _lstm(p):
    c = Chain(p)
    c_prev, x = p.input_names
    c_shape = p.input_arrays[0].shape
    x_shape = p.input_arrays[1].shape
    units = c_shape[1]
    # Unit j's gates a, i, f, o sit at columns 4j .. 4j+3 of x.
    gates = c.op("Reshape", [x, c.const([x_shape[0], units, 4, *x_shape[2:]])])
    a, i, f, o = c.op("Split", [gates, c.const([1, 1, 1, 1])], n_outputs=4, axis=2)
    a, i, f, o = (c.op("Squeeze", [g, c.const([2])]) for g in (a, i, f, o))
    rows = x_shape[0]
    c_head = c_prev
    if rows < c_shape[0]:
        c_head = c.op("Slice", [c_prev, c.const([0]), c.const([rows]), c.const([0])])
    new_c_name = p.output_names[0] if rows == c_shape[0] else None
    new_c = c.op(
        "Add",
        [
            c.op("Mul", [c.op("Tanh", [a]), c.op("Sigmoid", [i])]),
            c.op("Mul", [c_head, c.op("Sigmoid", [f])]),
        ],
        None if new_c_name is None else [new_c_name],
    )
    if rows < c_shape[0]:
        rest = c.op("Slice", [c_prev, c.const([rows]), c.const([c_shape[0]]), c.const([0])])
        c.op("Concat", [new_c, rest], [p.output_names[0]], axis=0)
    c.op("Mul", [c.op("Tanh", [new_c]), c.op("Sigmoid", [o])], [p.output_names[1]])
    return c.nodes


# A RecurrentLayer's inputs: x, W_x, b_x, then h0.
_H0 = 3


def _rows(c, x, start, stop):
    """Rows ``start:stop`` of ``x``."""
    return c.op("Slice", [x, c.const([start]), c.const([stop]), c.const([0])])


def _recurrent_layer(step):
    """The converter of a RecurrentLayer (n_step_lstm/gru/rnn's loop over time), unrolled.

    The layer's inputs are the inputs ``x`` of every step (concatenated along
    the batch axis, ``B_t`` rows for step ``t``) with the weight and bias that
    project them (one Gemm for all steps), the initial state(s) of all ``B``
    rows and the recurrent weights. Each step of the recurrence, in the order
    the layer runs them (backward for the second direction), updates the
    leading ``B_t`` rows of the state with ``step(c, p_t, h, cell, params)``;
    the others keep theirs.
    """

    def convert(p):
        c = Chain(p)
        func = p.func
        names = list(p.input_names)
        projected = c.op("Gemm", names[:3], transB=1)
        n_rows = p.input_arrays[_H0].shape[0]
        has_cell = func.has_cell
        h = names[_H0]
        cell = names[_H0 + 1] if has_cell else None
        params = names[_H0 + 2 :] if has_cell else names[_H0 + 1 :]
        hs = {}
        for t in func.order:
            b = func.batches[t]
            start = func.offsets[t]
            p_t = _rows(c, projected, start, start + b)
            head_h = h if b == n_rows else _rows(c, h, 0, b)
            head_c = None
            if has_cell:
                head_c = cell if b == n_rows else _rows(c, cell, 0, b)
            new_h, new_c = step(c, p_t, head_h, head_c, params)
            hs[t] = new_h
            if b == n_rows:
                h, cell = new_h, new_c
            else:
                h = c.op("Concat", [new_h, _rows(c, h, b, n_rows)], axis=0)
                if has_cell:
                    cell = c.op("Concat", [new_c, _rows(c, cell, b, n_rows)], axis=0)
        steps = [hs[t] for t in range(len(func.batches))]
        out = p.output_names
        if len(steps) == 1:
            c.op("Identity", steps, [out[0]])
        else:
            c.op("Concat", steps, [out[0]], axis=0)
        c.op("Identity", [h], [out[1]])
        if has_cell:
            c.op("Identity", [cell], [out[2]])
        return c.nodes

    return convert


def _lstm_step(c, p_t, h, cell, params):
    # Pre-activations blocked as gates o, i, f, a (see dbr.functions.rnn.n_step_lstm).
    act = c.op("Gemm", [h, params[0], p_t], transB=1)
    n = c.p.input_arrays[_H0].shape[1]
    o, i, f, a = c.op("Split", [act, c.const([n] * 4)], n_outputs=4, axis=1)
    o, i, f = (c.op("Sigmoid", [g]) for g in (o, i, f))
    new_c = c.op("Add", [c.op("Mul", [f, cell]), c.op("Mul", [i, c.op("Tanh", [a])])])
    return c.op("Mul", [o, c.op("Tanh", [new_c])]), new_c


def _gru_step(c, p_t, h, cell, params):
    # Blocks r, z, n of the input and recurrent projections (see n_step_gru).
    n = c.p.input_arrays[_H0].shape[1]
    hw = c.op("Gemm", [h, params[0], params[1]], transB=1)
    p_r, p_z, p_n = c.op("Split", [p_t, c.const([n] * 3)], n_outputs=3, axis=1)
    h_r, h_z, h_n = c.op("Split", [hw, c.const([n] * 3)], n_outputs=3, axis=1)
    r = c.op("Sigmoid", [c.op("Add", [p_r, h_r])])
    z = c.op("Sigmoid", [c.op("Add", [p_z, h_z])])
    new = c.op("Tanh", [c.op("Add", [p_n, c.op("Mul", [r, h_n])])])
    return c.op("Add", [new, c.op("Mul", [z, c.op("Sub", [h, new])])]), None


def _rnn_step(c, p_t, h, cell, params):
    pre = c.op("Gemm", [h, params[0], p_t], transB=1)
    activation = "Tanh" if c.p.func.activation == "tanh" else "Relu"
    return c.op(activation, [pre]), None


def _split_gates(c, x, shape, n_gates, interleaved):
    """The ``n_gates`` gates of ``x`` of ``shape`` ``(B, n_gates * N, ...)``, each ``(B, N, ...)``.

    Interleaved (lstm's layout), unit ``j`` of gate ``k`` is column ``j * n_gates + k``;
    blocked, it is column ``k * N + j``.
    """
    units = shape[1] // n_gates
    if not interleaved:
        return c.op("Split", [x, c.const([units] * n_gates)], n_outputs=n_gates, axis=1)
    grouped = c.op("Reshape", [x, c.const([shape[0], units, n_gates, *shape[2:]])])
    gates = c.op("Split", [grouped, c.const([1] * n_gates)], n_outputs=n_gates, axis=2)
    return [c.op("Squeeze", [g, c.const([2])]) for g in gates]


def _cell(c, pairs, forgets, o, outputs):
    """``c = sum tanh(a) sigmoid(i) + sum c_k sigmoid(f_k)`` and ``h = sigmoid(o) tanh(c)``.

    ``pairs`` are the ``(a, i)`` gates and ``forgets`` the ``(c_k, f_k)``, added in dbr's
    order; ``outputs`` the names of ``c`` and ``h``.
    """
    terms = [c.op("Mul", [c.op("Tanh", [a]), c.op("Sigmoid", [i])]) for a, i in pairs]
    terms += [c.op("Mul", [c.op("Sigmoid", [f]), c_k]) for c_k, f in forgets]
    total = terms[0]
    for term in terms[1:-1]:
        total = c.op("Add", [total, term])
    if len(terms) > 1:
        total = c.op("Add", [total, terms[-1]], [outputs[0]])
    else:
        total = c.op("Identity", [total], [outputs[0]])
    c.op("Mul", [c.op("Sigmoid", [o]), c.op("Tanh", [total])], [outputs[1]])
    return c.nodes


def _slstm_gates(c, p):
    """The gates ``(a, i, f, o)`` of ``x1`` and of ``x2``, the last two inputs (lstm's layout)."""
    shape = p.input_arrays[-1].shape
    return [_split_gates(c, x, shape, 4, True) for x in p.input_names[-2:]]


def _slstm(p):
    c = Chain(p)
    c1, c2 = p.input_names[:2]
    (a1, i1, f1, o1), (a2, i2, f2, o2) = _slstm_gates(c, p)
    o = c.op("Add", [o1, o2])
    return _cell(c, [(a1, i1), (a2, i2)], [(c1, f1), (c2, f2)], o, p.output_names)


def _slstm_pre_activations(p):
    """slstm's pre-activations ``[a1, i1, a2, i2, o1 + o2, f1, f2]``, blocked along axis 1."""
    c = Chain(p)
    (a1, i1, f1, o1), (a2, i2, f2, o2) = _slstm_gates(c, p)
    blocks = [a1, i1, a2, i2, c.op("Add", [o1, o2]), f1, f2]
    c.op("Concat", blocks, p.output_names, axis=1)
    return c.nodes


def _tree_lstm(p):
    """The TreeLSTM cell: ``x`` holds the blocks ``a, i, o, f_1 .. f_n`` along axis 1."""
    c = Chain(p)
    n = p.func.n_cells
    x_shape = p.input_arrays[n].shape
    a, i, o, *fs = _split_gates(c, p.input_names[n], x_shape, 3 + n, False)
    return _cell(c, [(a, i)], list(zip(p.input_names[:n], fs)), o, p.output_names)


CONVERTERS = {
    "LSTM": _lstm,
    "SLSTM": _slstm,
    "SLSTMGates": _slstm_pre_activations,
    "TreeLSTM": _tree_lstm,
    "LSTMLayer": _recurrent_layer(_lstm_step),
    "GRULayer": _recurrent_layer(_gru_step),
    "RNNLayer": _recurrent_layer(_rnn_step),
}
