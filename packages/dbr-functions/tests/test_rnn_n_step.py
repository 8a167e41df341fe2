"""n_step_rnn/birnn (tanh, relu), n_step_gru/bigru and n_step_lstm/bilstm as one family.

Each function is checked against one loop reference in float64 that differs
between the families only in its cell, and against the same network composed
step by step from dbr's own functions; what is particular to one family
follows the shared tests.
"""

import dataclasses
from collections.abc import Callable

import numpy
import pytest

from dbr.core import Variable, grad, no_backprop_mode, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.activation.relu import relu
from dbr.functions.activation.sigmoid import sigmoid as f_sigmoid
from dbr.functions.activation.tanh import tanh as f_tanh
from dbr.functions.array.concat import concat
from dbr.functions.connection.linear import linear
from dbr.functions.noise.dropout import dropout
from dbr.functions.rnn.lstm import lstm
from dbr.functions.rnn.n_step_gru import n_step_bigru, n_step_gru
from dbr.functions.rnn.n_step_lstm import n_step_bilstm, n_step_lstm
from dbr.functions.rnn.n_step_rnn import n_step_birnn, n_step_rnn

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
N_IN, N_UNITS = 3, 2


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


def sigmoid(x):
    return 1.0 / (1.0 + numpy.exp(-x))


def _elman_cell(act):
    def cell(x, states, w, b):
        (h,) = states
        return (act(x @ w[0].T + h @ w[1].T + b[0] + b[1]),)

    return cell


def _gru_cell(x, states, w, b):
    (h,) = states
    r = sigmoid(x @ w[0].T + h @ w[3].T + b[0] + b[3])
    z = sigmoid(x @ w[1].T + h @ w[4].T + b[1] + b[4])
    candidate = numpy.tanh(x @ w[2].T + b[2] + r * (h @ w[5].T + b[5]))
    return ((1 - z) * candidate + z * h,)


def _lstm_cell(x, states, w, b):
    h, c = states
    pre = [x @ w[j].T + h @ w[j + 4].T + b[j] + b[j + 4] for j in range(4)]
    # Chainer's roles: W_0 input gate, W_1 forget gate, W_2 cell input, W_3 output gate
    c = sigmoid(pre[1]) * c + sigmoid(pre[0]) * numpy.tanh(pre[2])
    return sigmoid(pre[3]) * numpy.tanh(c), c


def _composed_elman_cell(act):
    def cell(x, states, w, b):
        (h,) = states
        return (act(linear(x, w[0], b[0]) + linear(h, w[1], b[1])),)

    return cell


def _composed_gru_cell(x, states, w, b):
    (h,) = states
    r = f_sigmoid(linear(x, w[0], b[0]) + linear(h, w[3], b[3]))
    z = f_sigmoid(linear(x, w[1], b[1]) + linear(h, w[4], b[4]))
    candidate = f_tanh(linear(x, w[2], b[2]) + r * linear(h, w[5], b[5]))
    return ((1.0 - z) * candidate + z * h,)


def _stacked(mats):
    return concat([m[:, None] for m in mats], axis=1).reshape((-1,) + mats[0].shape[1:])


def _composed_lstm_cell(x, states, w, b):
    h, c = states
    # lstm interleaves a, i, f, o per unit: W_2, W_0, W_1, W_3
    order = (2, 0, 1, 3)
    w_x = _stacked([w[j] for j in order])
    w_h = _stacked([w[j + 4] for j in order])
    bias = _stacked([b[j] + b[j + 4] for j in order])
    c, h = lstm(c, linear(x, w_x, bias) + linear(h, w_h))
    return h, c


@dataclasses.dataclass(frozen=True)
class Family:
    """One kind of n-step function.

    Attributes:
        functions: the unidirectional and the bidirectional function.
        n_weights: weights (and biases) per layer and direction; the first half read the input.
        n_cells: states (1: h; 2: h and c).
        cell: ``cell(x, states, ws, bs) -> states`` of one step, in NumPy.
        composed: the same cell composed from dbr's functions.
        kwargs: further arguments of the functions.
    """

    functions: tuple
    n_weights: int
    n_cells: int
    cell: Callable
    composed: Callable
    kwargs: dict = dataclasses.field(default_factory=dict)


_RNN = (n_step_rnn, n_step_birnn)
FAMILIES = {
    "rnn-tanh": Family(_RNN, 2, 1, _elman_cell(numpy.tanh), _composed_elman_cell(f_tanh)),
    "rnn-relu": Family(
        _RNN,
        2,
        1,
        _elman_cell(lambda v: numpy.maximum(v, 0)),
        _composed_elman_cell(relu),
        {"activation": "relu"},
    ),
    "gru": Family((n_step_gru, n_step_bigru), 6, 1, _gru_cell, _composed_gru_cell),
    "lstm": Family((n_step_lstm, n_step_bilstm), 8, 2, _lstm_cell, _composed_lstm_cell),
}


def make_inputs(family, n_layers, directions, batches, dtype, n_rows=None, scale=0.5):
    """states, ws, bs, xs with Chainer's shapes, uniform in [-scale, scale]."""
    fam = FAMILIES[family]

    def uniform(*shape):
        return numpy.random.uniform(-scale, scale, shape).astype(dtype)

    n_rows = batches[0] if n_rows is None else n_rows
    n_rnn = n_layers * directions
    states = tuple(uniform(n_rnn, n_rows, N_UNITS) for _ in range(fam.n_cells))
    ws, bs = [], []
    half = fam.n_weights // 2
    for k in range(n_rnn):
        width = N_IN if k < directions else N_UNITS * directions
        ws.append([uniform(N_UNITS, width if j < half else N_UNITS) for j in range(fam.n_weights)])
        bs.append([uniform(N_UNITS) for _ in range(fam.n_weights)])
    xs = [uniform(b, N_IN) for b in batches]
    return states, ws, bs, xs


def flatten(states, ws, bs, xs):
    return (*states, *[w for g in ws for w in g], *[b for g in bs for b in g], *xs)


def unflatten(flat, family, n_rnn):
    fam = FAMILIES[family]
    n, m = fam.n_cells, fam.n_weights
    states, rest = tuple(flat[:n]), flat[n:]
    ws = [list(rest[m * k : m * k + m]) for k in range(n_rnn)]
    rest = rest[m * n_rnn :]
    bs = [list(rest[m * k : m * k + m]) for k in range(n_rnn)]
    return states, ws, bs, list(rest[m * n_rnn :])


def stacked(n_layers, directions, n_states, xs, run_direction, join):
    """Walk a stacked (bi)directional network: layer by layer, each direction over the steps.

    ``run_direction(layer, k, inputs, steps)`` runs direction ``k`` (numbered over
    layers and directions) of ``layer`` over ``inputs`` in the order ``steps`` and
    returns its final states and its outputs; ``join`` concatenates the two
    directions' outputs of one step. Returns the final states (one list per state,
    in order of ``k``) and the last layer's outputs.
    """
    finals = [[] for _ in range(n_states)]
    inputs = xs
    for layer in range(n_layers):
        outs = []
        for d in range(directions):
            steps = range(len(inputs) - 1, -1, -1) if d == 1 else range(len(inputs))
            running, ys = run_direction(layer, layer * directions + d, inputs, steps)
            for f, r in zip(finals, running):
                f.append(r)
            outs.append(ys)
        inputs = outs[0] if directions == 1 else [join(p) for p in zip(*outs)]
    return finals, inputs


def reference(family, n_layers, directions, states, ws, bs, xs, masks=None):
    """The network step by step in float64 (``masks`` scale the inputs of upper layers).

    Returns the final states (stacked, a tuple) and the outputs.
    """
    cell = FAMILIES[family].cell

    def run_direction(layer, k, inputs, steps):
        w = [a.astype(numpy.float64) for a in ws[k]]
        b = [v.astype(numpy.float64) for v in bs[k]]
        running = [s[k].astype(numpy.float64) for s in states]
        ys = [None] * len(inputs)
        for t in steps:
            x = inputs[t].astype(numpy.float64)
            if masks is not None and layer > 0:
                x = x * masks[k][t]
            n = len(x)
            new = cell(x, tuple(r[:n] for r in running), w, b)
            for r, v in zip(running, new):
                r[:n] = v
            ys[t] = running[0][:n].copy()
        return running, ys

    finals, ys = stacked(
        n_layers, directions, len(states), xs, run_direction, lambda p: numpy.concatenate(p, 1)
    )
    return tuple(numpy.stack(f) for f in finals), ys


def composed(family, n_layers, directions, states, ws, bs, xs):
    """The same network step by step from dbr's functions; final states per layer and direction."""
    cell = FAMILIES[family].composed

    def run_direction(layer, k, inputs, steps):
        running = [s[k] for s in states]
        ys = [None] * len(inputs)
        for t in steps:
            n = inputs[t].shape[0]
            cut = running[0].shape[0] > n
            new = cell(inputs[t], tuple(r[:n] if cut else r for r in running), ws[k], bs[k])
            running = [concat([v, r[n:]], axis=0) if cut else v for v, r in zip(new, running)]
            ys[t] = new[0]
        return running, ys

    return stacked(
        n_layers, directions, len(states), xs, run_direction, lambda p: concat(p, axis=1)
    )


def run(family, directions, n_layers, ratio, states, ws, bs, xs, **kwargs):
    """The family's function: the final states (a tuple) and the outputs."""
    fam = FAMILIES[family]
    function = fam.functions[directions - 1]
    *finals, ys = function(n_layers, ratio, *states, ws, bs, xs, **fam.kwargs, **kwargs)
    return tuple(finals), ys


@testing.parameterize(
    *testing.product(
        {
            "family": list(FAMILIES),
            "n_layers": [1, 2],
            "directions": [1, 2],
            "batches": [[3, 2, 2, 1], [2, 2], [1]],
            "dtype": FLOATS,
        }
    )
)
class TestNStep(FunctionTestCase):
    def before_test(self, test_name):
        # ReLU's kink (and tanh's, which shares the Elman tests) within a step of 0
        self.dodge_nondifferentiable = self.family.startswith("rnn")

    def generate_inputs(self):
        arrays = make_inputs(self.family, self.n_layers, self.directions, self.batches, self.dtype)
        return flatten(*arrays)

    def forward(self, inputs, device):
        states, ws, bs, xs = unflatten(inputs, self.family, self.n_layers * self.directions)
        finals, ys = run(self.family, self.directions, self.n_layers, 0.0, states, ws, bs, xs)
        return (*finals, *ys)

    def forward_expected(self, inputs):
        states, ws, bs, xs = unflatten(inputs, self.family, self.n_layers * self.directions)
        finals, ys = reference(self.family, self.n_layers, self.directions, states, ws, bs, xs)
        return tuple(a.astype(self.dtype) for a in (*finals, *ys))


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("directions", [1, 2])
@pytest.mark.parametrize("n_rows", [3, 5])
def test_matches_the_step_by_step_composition(family, directions, n_rows):
    n_layers = 2
    arrays = make_inputs(family, n_layers, directions, [3, 3, 2, 1], numpy.float64, n_rows)
    flat = [Variable(a) for a in flatten(*arrays)]
    states, ws, bs, xs = unflatten(flat, family, n_layers * directions)
    finals, ys = run(family, directions, n_layers, 0.0, states, ws, bs, xs)
    finals_c, ys_c = composed(family, n_layers, directions, states, ws, bs, xs)
    tol = {"atol": 1e-12, "rtol": 1e-10}
    for f, f_c in zip(finals, finals_c):
        for k in range(n_layers * directions):
            testing.assert_allclose(f.array[k], f_c[k].array, **tol)
    for y, y_c in zip(ys, ys_c):
        testing.assert_allclose(y.array, y_c.array, **tol)
    outputs = [*finals, *ys]
    g_outputs = [numpy.random.uniform(-1, 1, y.shape) for y in outputs]
    grads = grad(outputs, flat, g_outputs)
    n = len(finals)
    composed_outputs = [s for f in finals_c for s in f] + list(ys_c)
    g_composed = [g for gs in g_outputs[:n] for g in gs] + g_outputs[n:]
    grads_c = grad(composed_outputs, flat, g_composed)
    for g, g_c in zip(grads, grads_c):
        testing.assert_allclose(g.array, g_c.array, **tol)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("directions", [1, 2])
def test_fused_and_recorded_backward_agree(family, directions):
    # The fused backward runs when the backward is not recorded; the recorded one goes
    # step by step. Both give the same first-order gradients.
    arrays = make_inputs(family, 2, directions, [4, 3, 1], numpy.float64, n_rows=5)
    flat = [Variable(a) for a in flatten(*arrays)]
    states, ws, bs, xs = unflatten(flat, family, 2 * directions)
    finals, ys = run(family, directions, 2, 0.0, states, ws, bs, xs)
    outputs = [finals[0], ys[1]]  # any c and most ys get no gradient
    gys = [numpy.random.uniform(-1, 1, y.shape) for y in outputs]
    fused = grad(outputs, flat, gys)
    recorded = grad(outputs, flat, gys, enable_double_backprop=True)
    for g, g_r in zip(fused, recorded):
        assert (g is None) == (g_r is None)
        if g is not None:
            testing.assert_allclose(g.array, g_r.array, atol=1e-13, rtol=1e-11)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_rows_beyond_the_first_batch_pass_through(family):
    arrays = make_inputs(family, 1, 1, [2, 1], numpy.float64, n_rows=4)
    flat = [Variable(a) for a in flatten(*arrays)]
    states, ws, bs, xs = unflatten(flat, family, 1)
    finals, ys = run(family, 1, 1, 0.0, states, ws, bs, xs)
    for f, s in zip(finals, states):
        numpy.testing.assert_array_equal(f.array[:, 2:], s.array[:, 2:])
    g_finals = [numpy.full(f.shape, i + 1.0) for i, f in enumerate(finals)]
    for i, g in enumerate(grad(list(finals), list(states), g_finals)):
        numpy.testing.assert_array_equal(g.array[:, 2:], i + 1.0)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("directions", [1, 2])
def test_dropout_applies_to_the_inputs_of_upper_layers(family, directions):
    n_layers, ratio = 3, 0.4
    batches = [3, 2, 2]
    states, ws, bs, xs = make_inputs(family, n_layers, directions, batches, numpy.float64)
    numpy.random.seed(3)
    finals, ys = run(family, directions, n_layers, ratio, states, ws, bs, xs)
    # the same draws, in the same order: one mask per direction of each upper layer
    numpy.random.seed(3)
    width = N_UNITS * directions
    masks = [None] * (n_layers * directions)
    for k in range(directions, n_layers * directions):
        mask = dropout(numpy.ones((sum(batches), width)), ratio, return_mask=True)[1]
        masks[k] = numpy.split(mask, numpy.cumsum(batches)[:-1])
    finals_e, ys_e = reference(family, n_layers, directions, states, ws, bs, xs, masks)
    for f, f_e in zip(finals, finals_e):
        testing.assert_allclose(f.array, f_e, atol=1e-12, rtol=1e-10)
    for y, y_e in zip(ys, ys_e):
        testing.assert_allclose(y.array, y_e, atol=1e-12, rtol=1e-10)
    assert any(numpy.any(m[0] == 0) for m in masks[directions:])

    with using_config("train", False):
        (hy_test, *_), _ = run(family, directions, n_layers, ratio, states, ws, bs, xs)
    (hy_none, *_), _ = run(family, directions, n_layers, 0.0, states, ws, bs, xs)
    numpy.testing.assert_array_equal(hy_test.array, hy_none.array)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("directions", [1, 2])
def test_a_ratio_of_zero_still_draws_the_masks_as_chainer(family, directions):
    # Chainer's CPU n_step functions call dropout on every upper layer's
    # input, also at ratio 0, and dropout then draws a mask: numpy.random
    # must advance alike so that a seeded run goes on as Chainer's.
    n_layers, batches = 3, [3, 2, 2]
    states, ws, bs, xs = make_inputs(family, n_layers, directions, batches, numpy.float64)
    numpy.random.seed(4)
    (hy, *_), _ = run(family, directions, n_layers, 0.0, states, ws, bs, xs)
    after = numpy.random.rand(3)
    numpy.random.seed(4)
    for _ in range((n_layers - 1) * directions):
        numpy.random.rand(sum(batches), N_UNITS * directions)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))
    (hy_e, *_), _ = reference(family, n_layers, directions, states, ws, bs, xs)
    testing.assert_allclose(hy.array, hy_e, atol=1e-12, rtol=1e-10)
    # In test mode dropout draws nothing, in Chainer as here.
    numpy.random.seed(4)
    with using_config("train", False):
        run(family, directions, n_layers, 0.0, states, ws, bs, xs)
    after = numpy.random.rand(3)
    numpy.random.seed(4)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_without_backprop(family):
    states, ws, bs, xs = make_inputs(family, 2, 2, [3, 1], numpy.float32)
    with no_backprop_mode():
        finals, ys = run(family, 2, 2, 0.0, states, ws, bs, xs)
    finals_e, ys_e = reference(family, 2, 2, states, ws, bs, xs)
    tol = testing.tolerances(numpy.float32)
    for f, f_e in zip(finals, finals_e):
        testing.assert_allclose(f.array, f_e, **tol)
        assert f.creator is None


@pytest.mark.parametrize("family", list(FAMILIES))
def test_one_step_and_one_layer_shapes(family):
    states, ws, bs, xs = make_inputs(family, 1, 1, [4], numpy.float32)
    finals, ys = run(family, 1, 1, 0.0, states, ws, bs, xs)
    assert all(f.shape == (1, 4, N_UNITS) and f.dtype == numpy.float32 for f in finals)
    assert isinstance(ys, tuple) and len(ys) == 1 and ys[0].shape == (4, N_UNITS)


def test_relu_outputs_are_non_negative():
    (hx,), ws, bs, xs = make_inputs("rnn-relu", 2, 2, [3, 2], numpy.float32, scale=2.0)
    hy, ys = n_step_birnn(2, 0.0, hx, ws, bs, xs, activation="relu")
    assert all((y.array >= 0).all() for y in ys)
    assert (ys[0].array == 0).any()


# -- bad input --------------------------------------------------------------------


def _table_inputs(family, n_layers, directions):
    """make_inputs(family, n_layers, directions, [2, 1], float32) for the table below.

    The table is built at import; NumPy's global random state is put back so
    that collecting this file draws nothing from it.
    """
    state = numpy.random.get_state()
    try:
        return make_inputs(family, n_layers, directions, [2, 1], numpy.float32)
    finally:
        numpy.random.set_state(state)


def _replaced(groups, i, j, value):
    """A copy of the list of lists ``groups`` with ``groups[i][j]`` replaced by ``value``."""
    groups = [list(g) for g in groups]
    groups[i][j] = value
    return groups


(_R_HX,), _R_WS, _R_BS, _R_XS = _table_inputs("rnn-tanh", 1, 1)
(_G_HX,), _G_WS, _G_BS, _G_XS = _table_inputs("gru", 2, 1)
(_L_HX, _L_CX), _L_WS, _L_BS, _L_XS = _table_inputs("lstm", 2, 1)
_BI_STATES, _BI_WS, _BI_BS, _BI_XS = _table_inputs("lstm", 2, 2)
_LSTM = "n_step_lstm (Forward)"

test_bad_input = bad_input_test(
    [
        # n_step_rnn, n_step_birnn
        (
            n_step_rnn,
            (1, 0.0, _R_HX, _R_WS, _R_BS, _R_XS),
            {"activation": "sigmoid"},
            ValueError,
            "n_step_rnn: expected activation to be 'tanh' or 'relu', got 'sigmoid'",
        ),
        (
            n_step_birnn,
            (1, 0.0, _R_HX, _R_WS, _R_BS, _R_XS),
            {"activation": "elu"},
            ValueError,
            "n_step_birnn: expected activation",
        ),
        (
            n_step_rnn,
            (1, 0.0, _R_HX, [_R_WS[0] + _R_WS[0][:1]], _R_BS, _R_XS),
            {},
            ValueError,
            "n_step_rnn: expected ws[0] to hold 2 arrays, got 3",
        ),
        (
            n_step_rnn,
            (1, "0.5", _R_HX, _R_WS, _R_BS, _R_XS),
            {},
            TypeError,
            "n_step_rnn: expected dropout_ratio to be a float",
        ),
        (
            n_step_rnn,
            (1, 0.0, _R_HX, _R_WS, _R_BS, _R_XS),
            {"train": False},
            ValueError,
            "n_step_rnn: the train argument is not supported",
        ),
        (
            n_step_rnn,
            (1, 0.0, _R_HX, _R_WS, _R_BS, [x.astype(numpy.float16) for x in _R_XS]),
            {},
            InvalidType,
            ("n_step_rnn (Forward)", "xs[0].dtype == hx.dtype"),
        ),
        (
            n_step_rnn,
            (1, 0.0, _R_HX, _R_WS, [[_R_BS[0][0], _R_BS[0][1][:1]]], _R_XS),
            {},
            InvalidType,
            f"bs[0][1].shape == ({N_UNITS},)",
        ),
        (
            n_step_birnn,
            (1, 0.0, _R_HX, _R_WS + _R_WS, _R_BS + _R_BS, _R_XS),
            {},
            InvalidType,
            ("n_step_birnn (Forward)", "hx.shape == (2, B, N)"),
        ),
        # n_step_gru, n_step_bigru
        (
            n_step_gru,
            (2, 0.0, _G_HX, [_G_WS[0] + _G_WS[0][:2], _G_WS[1]], _G_BS, _G_XS),
            {},
            ValueError,
            "n_step_gru: expected ws[0] to hold 6 arrays, got 8",
        ),
        (
            n_step_bigru,
            (2, 0.0, _G_HX, _G_WS + _G_WS, _G_BS, _G_XS),
            {},
            ValueError,
            "n_step_bigru: expected bs to hold 4 lists",
        ),
        (
            n_step_gru,
            (2, 0.0, _G_HX, _G_WS, _G_BS, _G_XS),
            {"use_cudnn": False},
            ValueError,
            "n_step_gru: the use_cudnn argument is not supported",
        ),
        (
            n_step_gru,
            (2, -0.1, _G_HX, _G_WS, _G_BS, _G_XS),
            {},
            ValueError,
            "n_step_gru: expected dropout_ratio in [0, 1)",
        ),
        (
            n_step_gru,
            (2, 0.0, _G_HX[:, :, :1], _G_WS, _G_BS, _G_XS),
            {},
            InvalidType,
            ("n_step_gru (Forward)", "ws[0][0].shape == (1, 3)"),
        ),
        (
            n_step_gru,
            (
                2,
                0.0,
                _G_HX,
                _replaced(_G_WS, 1, 0, numpy.zeros((N_UNITS, N_IN), numpy.float32)),
                _G_BS,
                _G_XS,
            ),
            {},
            InvalidType,
            f"ws[1][0].shape == {(N_UNITS, N_UNITS)}",
        ),
        (
            n_step_gru,
            (2, 0.0, _G_HX, _G_WS, _G_BS, _G_XS[::-1]),
            {},
            InvalidType,
            "sorted by decreasing length",
        ),
        # n_step_lstm, n_step_bilstm: arguments
        (
            n_step_lstm,
            (0, 0.0, _L_HX[:0], _L_CX[:0], [], [], _L_XS),
            {},
            ValueError,
            "n_step_lstm: expected n_layers >= 1, got 0",
        ),
        (
            n_step_lstm,
            (2.0, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            TypeError,
            "n_step_lstm: expected n_layers to be an int",
        ),
        (
            n_step_lstm,
            (2, 1.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            ValueError,
            "n_step_lstm: expected dropout_ratio in [0, 1)",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS[:1], _L_BS, _L_XS),
            {},
            ValueError,
            "n_step_lstm: expected ws to hold 2 lists",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, [_L_BS[0], _L_BS[1][:7]], _L_XS),
            {},
            ValueError,
            "n_step_lstm: expected bs[1] to hold 8 arrays, got 7",
        ),
        (
            n_step_bilstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            ValueError,
            "n_step_bilstm: expected ws to hold 4 lists",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, []),
            {},
            TypeError,
            "n_step_lstm: expected xs to be a non-empty list",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX.tolist(), _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            TypeError,
            "n_step_lstm: expected hx to be a Variable or an array",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _replaced(_L_WS, 1, 3, None), _L_BS, _L_XS),
            {},
            TypeError,
            "n_step_lstm: expected ws[1][3] to be a Variable",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS),
            {"train": True},
            ValueError,
            "n_step_lstm: the train argument is not supported",
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS),
            {"foo": 1},
            TypeError,
            "n_step_lstm: got an unexpected keyword argument 'foo'",
        ),
        # n_step_lstm, n_step_bilstm: the type check
        (
            n_step_lstm,
            (2, 0.0, _L_HX[0], _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            InvalidType,
            (_LSTM, "hx.shape == (2, B, N)"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX[:1], _L_CX[:1], _L_WS, _L_BS, _L_XS),
            {},
            InvalidType,
            (_LSTM, "hx.shape == (2, B, N)"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX.astype(numpy.int32), _L_CX, _L_WS, _L_BS, _L_XS),
            {},
            InvalidType,
            (_LSTM, "hx.dtype.kind == 'f'"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX[:, :1], _L_WS, _L_BS, _L_XS),
            {},
            InvalidType,
            (_LSTM, "cx.shape == hx.shape"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX.astype(numpy.float64), _L_WS, _L_BS, _L_XS),
            {},
            InvalidType,
            (_LSTM, "cx.dtype == hx.dtype"),
        ),
        (
            n_step_lstm,
            (
                2,
                0.0,
                _L_HX,
                _L_CX,
                _replaced(_L_WS, 1, 5, numpy.zeros((N_UNITS, N_UNITS + 1), numpy.float32)),
                _L_BS,
                _L_XS,
            ),
            {},
            InvalidType,
            (_LSTM, f"ws[1][5].shape == {(N_UNITS, N_UNITS)}"),
        ),
        (
            n_step_lstm,
            (
                2,
                0.0,
                _L_HX,
                _L_CX,
                _replaced(_L_WS, 0, 2, _L_WS[0][2].astype(numpy.float64)),
                _L_BS,
                _L_XS,
            ),
            {},
            InvalidType,
            (_LSTM, "ws[0][2].dtype == hx.dtype"),
        ),
        (
            n_step_lstm,
            (
                2,
                0.0,
                _L_HX,
                _L_CX,
                _L_WS,
                _replaced(_L_BS, 0, 0, numpy.zeros((N_UNITS + 1,), numpy.float32)),
                _L_XS,
            ),
            {},
            InvalidType,
            (_LSTM, f"bs[0][0].shape == ({N_UNITS},)"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, _L_XS[::-1]),
            {},
            InvalidType,
            (_LSTM, "xs[1].shape[0] <= xs[0].shape[0] (sorted by decreasing length)"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, [numpy.zeros((3, N_IN), numpy.float32)]),
            {},
            InvalidType,
            (_LSTM, "xs[0].shape[0] <= hx.shape[1]"),
        ),
        (
            n_step_lstm,
            (
                2,
                0.0,
                _L_HX,
                _L_CX,
                _L_WS,
                _L_BS,
                [_L_XS[0], numpy.zeros((1, N_IN + 1), numpy.float32)],
            ),
            {},
            InvalidType,
            (_LSTM, "xs[1].shape == (B_1, 3)"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, [x.astype(numpy.float64) for x in _L_XS]),
            {},
            InvalidType,
            (_LSTM, "xs[0].dtype == hx.dtype"),
        ),
        (
            n_step_lstm,
            (2, 0.0, _L_HX, _L_CX, _L_WS, _L_BS, [_L_XS[0][:, :, None], _L_XS[1]]),
            {},
            InvalidType,
            (_LSTM, "xs[0].ndim == 2"),
        ),
        (
            n_step_bilstm,
            (
                2,
                0.0,
                *_BI_STATES,
                _replaced(_BI_WS, 2, 0, numpy.zeros((N_UNITS, N_UNITS), numpy.float32)),
                _BI_BS,
                _BI_XS,
            ),
            {},
            InvalidType,
            ("n_step_bilstm (Forward)", f"ws[2][0].shape == {(N_UNITS, 2 * N_UNITS)}"),
        ),
    ]
)
