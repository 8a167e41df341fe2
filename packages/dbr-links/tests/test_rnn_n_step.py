"""The n-step RNN links (Elman tanh/ReLU, GRU, LSTM; uni- and bidirectional) as one family.

Every link is checked against one loop reference (a sequence, layer,
direction and step at a time, in float64) that differs between the families
only in its cell; what is particular to one family follows the shared tests.
"""

import dataclasses
import os
from collections.abc import Callable

import numpy
import pytest
from rnn_reference import sigmoid

import dbr.functions as F
from dbr.core import InvalidType, Variable, initializers, using_config
from dbr.core.serializers import load_npz
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_backward_clear_of_kinks,
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.functions.activation.relu import ReLU
from dbr.links.rnn.n_step_gru import NStepBiGRU, NStepGRU, NStepGRUBase
from dbr.links.rnn.n_step_lstm import NStepBiLSTM, NStepLSTM, NStepLSTMBase
from dbr.links.rnn.n_step_rnn import (
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepRNNBase,
    NStepRNNReLU,
    NStepRNNTanh,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def _relu(z):
    return numpy.maximum(z, 0)


def _elman_step(act):
    def step(w, b, x, h):
        return (act(w[0] @ x + b[0] + w[1] @ h + b[1]),)

    return step


def _gru_step(w, b, x, h):
    r = sigmoid(w[0] @ x + w[3] @ h + b[0] + b[3])
    z = sigmoid(w[1] @ x + w[4] @ h + b[1] + b[4])
    candidate = numpy.tanh(w[2] @ x + b[2] + r * (w[5] @ h + b[5]))
    return ((1 - z) * candidate + z * h,)


def _lstm_step(w, b, x, h, c):
    # Chainer's roles: w0/w4 input gate, w1/w5 forget gate, w2/w6 cell input, w3/w7 output gate
    i = sigmoid(w[0] @ x + w[4] @ h + b[0] + b[4])
    f = sigmoid(w[1] @ x + w[5] @ h + b[1] + b[5])
    a = numpy.tanh(w[2] @ x + w[6] @ h + b[2] + b[6])
    o = sigmoid(w[3] @ x + w[7] @ h + b[3] + b[7])
    c = f * c + i * a
    return o * numpy.tanh(c), c


@dataclasses.dataclass(frozen=True)
class Family:
    """What the links of one family share.

    Attributes:
        base: their base class.
        step: ``step(ws, bs, x, *states) -> states`` of one cell (states: h, or h and c).
        n_weights: weights (and biases) per layer and direction; the first half read the input.
        n_cells: states per call (1: h; 2: h and c).
    """

    base: type
    step: Callable
    n_weights: int
    n_cells: int


FAMILIES = {
    NStepRNNTanh: Family(NStepRNNBase, _elman_step(numpy.tanh), 2, 1),
    NStepRNNReLU: Family(NStepRNNBase, _elman_step(_relu), 2, 1),
    NStepBiRNNTanh: Family(NStepRNNBase, _elman_step(numpy.tanh), 2, 1),
    NStepBiRNNReLU: Family(NStepRNNBase, _elman_step(_relu), 2, 1),
    NStepGRU: Family(NStepGRUBase, _gru_step, 6, 1),
    NStepBiGRU: Family(NStepGRUBase, _gru_step, 6, 1),
    NStepLSTM: Family(NStepLSTMBase, _lstm_step, 8, 2),
    NStepBiLSTM: Family(NStepLSTMBase, _lstm_step, 8, 2),
}
CLASSES = list(FAMILIES)
BIDIRECTIONAL = {NStepBiRNNTanh, NStepBiRNNReLU, NStepBiGRU, NStepBiLSTM}


def _reference(link, states, xs):
    """The link computed one sequence, layer, direction and step at a time, in float64.

    Returns the final states (a tuple, as ``states``) and the outputs.
    """
    step = FAMILIES[type(link)].step
    ws = [[w.array.astype(numpy.float64) for w in group] for group in link.ws]
    bs = [[b.array.astype(numpy.float64) for b in group] for group in link.bs]
    finals = [s.astype(numpy.float64) for s in states]
    ys = []
    for s, x in enumerate(xs):
        inputs = x.astype(numpy.float64)
        for layer in range(link.n_layers):
            outputs = []
            for d in range(link.direction):
                k = layer * link.direction + d
                state = tuple(f[k, s] for f in finals)
                out = numpy.empty((len(inputs), link.out_size))
                steps = range(len(inputs)) if d == 0 else reversed(range(len(inputs)))
                for t in steps:
                    state = step(ws[k], bs[k], inputs[t], *state)
                    out[t] = state[0]
                for f, value in zip(finals, state):
                    f[k, s] = value
                outputs.append(out)
            inputs = numpy.concatenate(outputs, axis=1)
        ys.append(inputs)
    return tuple(finals), ys


def _zeros(link, batch):
    shape = (link.n_layers * link.direction, batch, link.out_size)
    return (numpy.zeros(shape),) * link.n_cells


def _call(link, states, xs, **kwargs):
    """``link(*states, xs)``, split into the final states (a tuple) and the outputs."""
    *finals, ys = link(*states, xs, **kwargs)
    return tuple(finals), ys


def _randomize(link, seed=0):
    rng = numpy.random.default_rng(seed)
    for param in link.params():
        param.array[...] = rng.uniform(-0.7, 0.7, param.shape)


def _inputs(lengths, in_size, dtype, seed=1):
    rng = numpy.random.default_rng(seed)
    return [rng.uniform(-1, 1, (n, in_size)).astype(dtype) for n in lengths]


def _states(link, batch, dtype, seed=2):
    rng = numpy.random.default_rng(seed)
    shape = (link.n_layers * link.direction, batch, link.out_size)
    return tuple(rng.uniform(-1, 1, shape).astype(dtype) for _ in range(link.n_cells))


def _assert_states_close(actual, expected, **tol):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_allclose(a.array, e, **tol)


# -- construction ----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_positional_and_keyword_forms(cls):
    family = FAMILIES[cls]
    n = family.n_weights
    direction = 2 if cls in BIDIRECTIONAL else 1
    for link in (
        cls(3, 2, 5, 0.5),
        cls(n_layers=3, in_size=2, out_size=5, dropout=0.5),
        cls(3, 2, 5, 0.5, initialW=None, initial_bias=None),
    ):
        assert isinstance(link, family.base)
        assert (link.n_layers, link.out_size, link.dropout) == (3, 5, 0.5)
        assert link.direction == direction
        assert link.use_bi_direction is (direction == 2)
        assert link.n_weights == n and link.n_cells == family.n_cells
        assert len(link) == 3 * direction
        for k, layer in enumerate(link):
            width = 2 if k < direction else 5 * direction
            for j in range(n):
                assert getattr(layer, f"w{j}").shape == (5, width if j < n // 2 else 5)
                numpy.testing.assert_array_equal(getattr(layer, f"b{j}").array, numpy.zeros(5))
        names = [f"w{j}" for j in range(n)]
        assert [[w.name for w in group] for group in link.ws] == [names] * len(link)
        assert link.bs[-1][-1] is getattr(link[-1], f"b{n - 1}")
        assert link.ws[1][n // 2] is getattr(link[1], f"w{n // 2}")


@pytest.mark.parametrize("cls", CLASSES)
def test_initializers(cls):
    n = FAMILIES[cls].n_weights
    link = cls(1, 3, 2, 0.0, initialW=initializers.One(), initial_bias=-0.5)
    for layer in link:
        for j in range(n):
            w = getattr(layer, f"w{j}").array
            numpy.testing.assert_array_equal(w, numpy.ones_like(w))
            numpy.testing.assert_array_equal(getattr(layer, f"b{j}").array, numpy.full(2, -0.5))
    numpy.random.seed(0)
    link = cls(2, 400, 300, 0.0)
    assert link[0].w0.dtype == numpy.float32
    assert abs(link[0].w0.array.std() - (1 / 400) ** 0.5) < 0.005
    last = getattr(link[-1], f"w{n // 2}")
    assert abs(last.array.std() - (1 / 300) ** 0.5) < 0.005
    first_of_layer_2 = link[link.direction].w0
    width = 300 * link.direction
    assert abs(first_of_layer_2.array.std() - (1 / width) ** 0.5) < 0.005


def test_an_array_initializer():
    init = numpy.arange(4, dtype=numpy.float32).reshape(2, 2)
    link = NStepRNNTanh(1, 2, 2, 0.0, initialW=init, initial_bias=initializers.One())
    numpy.testing.assert_array_equal(link[0].w0.array, init)
    numpy.testing.assert_array_equal(link[0].w1.array, init)
    numpy.testing.assert_array_equal(link[0].b1.array, numpy.ones(2))


@pytest.mark.parametrize("cls", CLASSES)
def test_param_names(cls):
    n = FAMILIES[cls].n_weights
    for n_layers, in_size in ((2, 3), (1, None)):
        link = cls(n_layers, in_size, 4, 0.0)
        expected = [f"/{k}/{kind}{j}" for k in range(len(link)) for kind in "bw" for j in range(n)]
        assert param_names(link) == expected
    assert persistent_names(link) == []


# -- forward values -----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("lengths", [[6, 3, 2, 2], [2, 6, 3, 2, 1], [5]])
def test_forward_against_reference(cls, lengths):
    link = make_link(cls, numpy.float64, 2, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs(lengths, 3, numpy.float64)
    states = _states(link, len(xs), numpy.float64)
    finals, ys = _call(link, states, xs)
    finals_ref, ys_ref = _reference(link, states, xs)
    assert isinstance(ys, list) and len(ys) == len(lengths)
    assert all(f.shape == states[0].shape for f in finals)
    _assert_states_close(finals, finals_ref, **tolerances("float64"))
    for y, y_ref, n in zip(ys, ys_ref, lengths):
        assert y.shape == (n, 4 * link.direction)
        assert_allclose(y.array, y_ref, **tolerances("float64"))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_dtypes(cls, dtype):
    link = make_link(cls, dtype, 1, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs([2, 4, 3], 3, dtype)
    states = _states(link, 3, dtype)
    finals, ys = _call(link, [Variable(s) for s in states], [Variable(x) for x in xs])
    finals_ref, ys_ref = _reference(link, states, xs)
    tol = tolerances(dtype) if dtype != numpy.float16 else {"atol": 5e-3, "rtol": 5e-3}
    assert all(f.dtype == dtype for f in finals)
    _assert_states_close(finals, finals_ref, **tol)
    for y, y_ref in zip(ys, ys_ref):
        assert y.dtype == dtype
        assert_allclose(y.array, y_ref, **tol)


@pytest.mark.parametrize("cls", CLASSES)
def test_none_states_are_zeros(cls):
    link = cls(2, 3, 4, 0.0)
    xs = _inputs([3, 1, 4], 3, numpy.float32)
    zeros = numpy.zeros((2 * link.direction, 3, 4), numpy.float32)
    finals, ys = _call(link, (None,) * link.n_cells, xs)
    finals0, ys0 = _call(link, (zeros,) * link.n_cells, xs)
    for f, f0 in zip(finals, finals0):
        numpy.testing.assert_array_equal(f.array, f0.array)
    for y, y0 in zip(ys, ys0):
        numpy.testing.assert_array_equal(y.array, y0.array)
    init = link.init_hx(xs)
    assert isinstance(init, Variable) and init.dtype == numpy.float32
    numpy.testing.assert_array_equal(init.array, zeros)


@pytest.mark.parametrize("cls", CLASSES)
def test_lazy_in_size(cls):
    n = FAMILIES[cls].n_weights
    link = make_link(cls, numpy.float64, 2, None, 4, 0.0)
    first = link.direction
    for k, layer in enumerate(link):
        for j in range(n):
            assert (getattr(layer, f"w{j}").array is None) == (k < first and j < n // 2)
    xs = _inputs([2, 3], 5, numpy.float64)
    with using_config("dtype", numpy.float64):
        finals, ys = _call(link, (None,) * link.n_cells, xs)
    for k in range(first):
        for j in range(n // 2):
            w = getattr(link[k], f"w{j}")
            assert w.shape == (4, 5) and w.dtype == numpy.float64
    finals_ref, ys_ref = _reference(link, _zeros(link, 2), xs)
    _assert_states_close(finals, finals_ref, **tolerances("float64"))
    for y, y_ref in zip(ys, ys_ref):
        assert_allclose(y.array, y_ref, **tolerances("float64"))


# -- dropout and modes ------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_dropout_train_versus_test(cls):
    link = make_link(cls, numpy.float64, 2, 3, 4, 0.5)
    _randomize(link)
    xs = _inputs([3, 4], 3, numpy.float64)
    none = (None,) * link.n_cells
    with using_config("train", False):
        finals_a, ys_a = _call(link, none, xs)
        finals_b, ys_b = _call(link, none, xs)
    finals_ref, ys_ref = _reference(link, _zeros(link, 2), xs)
    for a, b in zip(finals_a, finals_b):
        numpy.testing.assert_array_equal(a.array, b.array)
    _assert_states_close(finals_a, finals_ref, **tolerances("float64"))
    for a, b, ref in zip(ys_a, ys_b, ys_ref):
        numpy.testing.assert_array_equal(a.array, b.array)
        assert_allclose(a.array, ref, **tolerances("float64"))
    numpy.random.seed(0)
    _, ys_train = _call(link, none, xs)
    assert not all(numpy.allclose(y.array, ref) for y, ref in zip(ys_train, ys_ref))


@pytest.mark.parametrize("cls", CLASSES)
def test_dropout_spares_the_first_layer_input(cls):
    link = make_link(cls, numpy.float64, 1, 3, 4, 0.9)
    _randomize(link)
    xs = _inputs([3, 2], 3, numpy.float64)
    _, ys = _call(link, (None,) * link.n_cells, xs)
    _, ys_ref = _reference(link, _zeros(link, 2), xs)
    for y, ref in zip(ys, ys_ref):
        assert_allclose(y.array, ref, **tolerances("float64"))


# -- gradients ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(cls, dtype):
    # Backprop runs in dtype, the numerical gradient in float64: a float32 finite
    # difference with eps=1e-3 carries rounding noise of the tolerance's size, which
    # depends on the BLAS kernels of the machine. The ReLU links have a kink wherever
    # a pre-activation crosses 0: inputs with one within a step are drawn again.
    link = make_link(cls, dtype, 2, 2, 3, 0.0)
    lengths = [2, 1, 3]
    width = 3 * link.direction
    n_cells = link.n_cells

    def draw():
        seeds = numpy.random.randint(2**31, size=4)
        _randomize(link, seeds[0])
        xs = _inputs(lengths, 2, dtype, seeds[1])
        states = _states(link, 3, dtype, seeds[2])
        rng = numpy.random.default_rng(seeds[3])
        gys = [rng.uniform(-1, 1, (n, width)).astype(dtype) for n in lengths]
        gstates = [rng.uniform(-1, 1, s.shape).astype(dtype) for s in states]
        return (*states, *xs), (*gstates, *gys)

    def f(*inputs):
        finals, ys = _call(link, inputs[:n_cells], list(inputs[n_cells:]))
        return (*finals, *ys)

    # float16's errors add up along the sequences and layers
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else None
    check_backward_clear_of_kinks(draw, f, link.params(), dtype, kinked=(ReLU,), tol=tol)


def _assert_grads(link, xs, grads, gxs, tol):
    for name, p in link.namedparams():
        assert_allclose(p.grad, grads[name], **tol)
    for x, gx in zip(xs, gxs):
        if gx is not None:
            assert_allclose(x.grad, gx, **tol)


def test_birnn_gradients_match_composed_functions():
    link = make_link(NStepBiRNNTanh, numpy.float64, 1, 2, 3, 0.0)
    _randomize(link)
    xs = [Variable(x) for x in _inputs([2, 3], 2, numpy.float64)]
    hx = Variable(_states(link, 2, numpy.float64)[0])
    link.cleargrads()
    hy, ys = link(hx, xs)
    (F.sum(hy**2) + F.sum(F.concat(ys, axis=0) ** 3)).backward()
    grads = {name: p.grad.copy() for name, p in link.namedparams()}
    gxs = [x.grad.copy() for x in xs] + [hx.grad.copy()]
    link.cleargrads()
    hx.cleargrad()

    # each direction composed from F.linear and F.tanh, one sequence at a time
    total = 0
    for s, x in enumerate(xs):
        x.cleargrad()
        outputs = []
        for d, layer in enumerate(link):
            h = hx[d, s : s + 1]
            out = [None] * len(x)
            for t in range(len(x)) if d == 0 else reversed(range(len(x))):
                h = F.tanh(
                    F.linear(x[t : t + 1], layer.w0, layer.b0) + F.linear(h, layer.w1, layer.b1)
                )
                out[t] = h
            total = total + F.sum(h**2)
            outputs.append(F.concat(out, axis=0))
        total = total + F.sum(F.concat(outputs, axis=1) ** 3)
    total.backward()
    _assert_grads(link, [*xs, hx], grads, gxs, tolerances("float64"))


def test_gru_gradients_through_unsorted_sequences_match_composed_functions():
    link = make_link(NStepGRU, numpy.float64, 1, 2, 3, 0.0)
    _randomize(link)
    xs = [Variable(x) for x in _inputs([1, 3, 2], 2, numpy.float64)]
    link.cleargrads()
    hy, ys = link(None, xs)
    (F.sum(hy * hy) + F.sum(F.concat(ys, axis=0) ** 3)).backward()
    grads = {name: p.grad.copy() for name, p in link.namedparams()}
    gxs = [x.grad.copy() for x in xs]
    link.cleargrads()

    # the same GRU composed from F.linear and elementwise functions, one sequence at a time
    w, b = link.ws[0], link.bs[0]
    total = 0
    for x in xs:
        x.cleargrad()
        h = numpy.zeros((1, 3))
        for t in range(len(x)):
            xt = x[t : t + 1]
            r = F.sigmoid(F.linear(xt, w[0], b[0]) + F.linear(h, w[3], b[3]))
            z = F.sigmoid(F.linear(xt, w[1], b[1]) + F.linear(h, w[4], b[4]))
            candidate = F.tanh(F.linear(xt, w[2], b[2]) + r * F.linear(h, w[5], b[5]))
            h = (1 - z) * candidate + z * h
            total = total + F.sum(h**3)
        total = total + F.sum(h * h)
    total.backward()
    _assert_grads(link, xs, grads, gxs, tolerances("float64"))


def test_lstm_parameter_gradients_match_composed_functions():
    link = make_link(NStepLSTM, numpy.float64, 1, 2, 3, 0.0)
    _randomize(link)
    xs = _inputs([2, 3], 2, numpy.float64)
    link.cleargrads()
    _, _, ys = link(None, None, xs)
    F.sum(F.concat(ys, axis=0) ** 2).backward()
    grads = {name: p.grad.copy() for name, p in link.namedparams()}
    link.cleargrads()

    # the same LSTM composed from F.linear and F.lstm, one sequence at a time
    w = link[0]
    total = 0
    for x in xs:
        h = numpy.zeros((1, 3))
        c = numpy.zeros((1, 3))
        for t in range(len(x)):
            # F.lstm takes [a, i, f, o] interleaved per unit: w2, w0, w1, w3
            parts = [
                F.linear(x[t : t + 1], getattr(w, f"w{j}"), getattr(w, f"b{j}"))
                + F.linear(h, getattr(w, f"w{j + 4}"), getattr(w, f"b{j + 4}"))
                for j in (2, 0, 1, 3)
            ]
            gates = F.reshape(F.stack(parts, axis=2), (1, 12))
            c, h = F.lstm(c, gates)
            total = total + F.sum(h**2)
    total.backward()
    _assert_grads(link, [], grads, [], tolerances("float64"))


# -- serialization and copies ---------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_round_trip(cls):
    link = cls(2, 3, 4, 0.0)
    _randomize(link)
    fresh = check_round_trip(link, cls(2, None, 4, 0.0))
    xs = _inputs([3, 2], 3, numpy.float32)
    none = (None,) * link.n_cells
    finals, _ = _call(link, none, xs)
    finals2, _ = _call(fresh, none, xs)
    for f, f2 in zip(finals, finals2):
        numpy.testing.assert_array_equal(f.array, f2.array)


@pytest.mark.parametrize(
    "cls, file, prefix",
    [(NStepLSTM, "n_step_lstm_link.npz", "uni"), (NStepBiLSTM, "n_step_bilstm_link.npz", "bi")],
)
def test_loads_a_chainer_model_and_gives_its_outputs(cls, file, prefix):
    # Written by Chainer 7.8.1's save_npz from its own link; see
    # dbr-functions/tests/fixtures/make_rnn_chainer.py, which made these files.
    link = make_link(cls, numpy.float64, 2, 3, 2, 0.0)
    load_npz(os.path.join(FIXTURES, file), link)
    with numpy.load(os.path.join(FIXTURES, "n_step_lstm_link_io.npz"), allow_pickle=False) as io:
        io = {k[len(prefix) + 1 :]: v for k, v in io.items() if k.startswith(prefix + "/")}
    xs = [io[f"x{b}"] for b in range(3)]
    with using_config("train", False):
        hy, cy, ys = link(None, None, xs)
    tol = {"atol": 1e-12, "rtol": 1e-10}
    assert_allclose(hy.array, io["hy"], **tol)
    assert_allclose(cy.array, io["cy"], **tol)
    for b, y in enumerate(ys):
        assert_allclose(y.array, io[f"y{b}"], **tol)


@pytest.mark.parametrize("cls", CLASSES)
def test_copy_modes(cls):
    n = FAMILIES[cls].n_weights
    link = cls(2, 3, 4, 0.0)
    check_copy_modes(link)
    xs = _inputs([2, 3], 3, numpy.float32)
    none = (None,) * link.n_cells
    (hy, *_), _ = _call(link, none, xs)
    fresh = link.copy("init")
    assert fresh.ws[0][0] is fresh[0].w0
    assert _call(fresh, none, xs[:1])[0][0].shape == (2 * link.direction, 1, 4)
    for mode in ("share", "copy"):
        copied = link.copy(mode)
        last = f"w{n - 1}"
        assert copied.ws[1][-1] is getattr(copied[1], last)
        assert copied.ws[1][-1] is not getattr(link[1], last)
        assert (copied.ws[1][-1].array is getattr(link[1], last).array) == (mode == "share")
        assert copied.bs[-1][-1] is getattr(copied[-1], f"b{n - 1}")
        (hy2, *_), _ = _call(copied, none, xs)
        numpy.testing.assert_array_equal(hy.array, hy2.array)


@pytest.mark.parametrize("cls", CLASSES)
def test_lazy_copy_stays_lazy(cls):
    link = cls(1, None, 4, 0.0)
    copied = link.copy("copy")
    assert copied[0].w0.array is None
    _call(copied, (None,) * link.n_cells, _inputs([2], 6, numpy.float32))
    assert copied[0].w0.shape == (4, 6) and link[0].w0.array is None


# -- bad input --------------------------------------------------------------------


def _lazily_initialised(cls, in_size):
    """A ``cls(1, None, 4, 0.0)`` that has run once on inputs of ``in_size`` features."""
    link = cls(1, None, 4, 0.0)
    _call(link, (None,) * link.n_cells, _inputs([2], in_size, numpy.float32))
    return link


def _bad_forward_rows(cls):
    link = cls(1, 3, 4, 0.0)
    xs = _inputs([2], 3, numpy.float32)
    none = (None,) * link.n_cells
    who = f"{cls.__name__}.forward"
    return [
        (_call, (link, none, xs), {"train": True}, ValueError, f"{who}: the train argument"),
        (_call, (link, none, xs), {"foo": 1}, TypeError, f"{who}: got an unexpected keyword"),
    ] + [
        (_call, (link, none, bad), {}, TypeError, f"{who}: expected xs to be a non-empty list")
        for bad in (xs[0], numpy.stack(xs), [])
    ]


_TANH = NStepRNNTanh(1, 3, 4, 0.0)
_HX_OF_ONE = numpy.zeros((1, 1, 4), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            NStepLSTM,
            (1, 3, 2, 0.0, initializers.One()),
            {},
            TypeError,
            "positional argument",
        ),
        (
            NStepRNNBase(1, 2, 3, 0.0),
            (None, _inputs([2], 2, numpy.float32)),
            {},
            NotImplementedError,
            "NStepRNNBase.rnn",
        ),
        (
            NStepRNNReLU,
            (-1, 3, 4, 0.0),
            {},
            ValueError,
            "NStepRNNReLU: expected n_layers to be a positive int, got -1",
        ),
        (NStepRNNReLU, (1, "3", 4, 0.0), {}, ValueError, "in_size to be a positive int or None"),
        (NStepRNNReLU, (1, 3, None, 0.0), {}, ValueError, "out_size to be a positive int, got N"),
        (NStepRNNReLU, (1, 3, 4, None), {}, TypeError, "expected dropout to be a float, got None"),
        (NStepRNNReLU, (1, 3, 4, 0.0), {"use_cudnn": "never"}, ValueError, "the use_cudnn arg"),
        (NStepRNNReLU, (1, 3, 4, 0.0), {"activation": "tanh"}, ValueError, "the activation arg"),
        (
            NStepBiGRU,
            (1, 3, 0, 0.0),
            {},
            ValueError,
            "NStepBiGRU: expected out_size to be a positive int, got 0",
        ),
        (NStepBiGRU, (True, 3, 4, 0.0), {}, ValueError, "n_layers to be a positive int, got True"),
        (NStepBiGRU, (1, 3, 4, -0.1), {}, ValueError, "NStepBiGRU: expected dropout in [0, 1)"),
        (NStepBiGRU, (1, 3, 4, 0.0), {"activation": "relu"}, ValueError, "the activation arg"),
        (
            NStepBiGRU,
            (1, 3, 4, 0.0),
            {"wscale": 1},
            TypeError,
            ("unexpected keyword ", "'wscale'"),
        ),
        (
            NStepLSTM,
            (0, 3, 4, 0.0),
            {},
            ValueError,
            "NStepLSTM: expected n_layers to be a positive int, got 0",
        ),
        (
            NStepLSTM,
            (1, -3, 4, 0.0),
            {},
            ValueError,
            "in_size to be a positive int or None, got -3",
        ),
        (NStepLSTM, (1, 3, 4.0, 0.0), {}, ValueError, "out_size to be a positive int, got 4.0"),
        (
            NStepLSTM,
            (1, 3, 4, 1.0),
            {},
            ValueError,
            "NStepLSTM: expected dropout in [0, 1), got 1",
        ),
        (NStepLSTM, (1, 3, 4, "0.1"), {}, TypeError, "expected dropout to be a float, got '0.1'"),
        (NStepLSTM, (1, 3, 4, 0.0), {"use_cudnn": True}, ValueError, "NStepLSTM: the use_cudnn"),
        (NStepLSTM, (1, 3, 4, 0.0), {"use_bi_direction": True}, ValueError, "use_bi_direction"),
        (
            NStepLSTM,
            (1, 3, 4, 0.0),
            {"nobias": True},
            TypeError,
            ("unexpected keyword ", "'nobias'"),
        ),
        (
            lambda: _call(
                _lazily_initialised(NStepRNNReLU, 3), (None,), _inputs([2], 2, numpy.float32)
            ),
            (),
            {},
            InvalidType,
            ("n_step_rnn", "ws[0][0].shape == (4, 2)"),
        ),
        (
            _call,
            (NStepBiGRU(1, 3, 4, 0.0), (None,), _inputs([2], 2, numpy.float32)),
            {},
            InvalidType,
            ("n_step_bigru", "ws[0][0].shape == (4, 2)"),
        ),
        (
            _call,
            (NStepLSTM(1, 3, 4, 0.0), (None, None), _inputs([2], 5, numpy.float32)),
            {},
            InvalidType,
            ("n_step_lstm", "ws[0][0].shape == (4, 5)"),
        ),
        (
            _call,
            (NStepBiRNNTanh(1, 3, 4, 0.0), (None,), _inputs([2, 1], 3, numpy.float64)),
            {},
            InvalidType,
            ("n_step_birnn", "float32 != float64"),
        ),
        (
            _call,
            (NStepGRU(1, 3, 4, 0.0), (None,), _inputs([2, 1], 3, numpy.float16)),
            {},
            InvalidType,
            ("n_step_gru", "float32 != float16"),
        ),
        (
            _call,
            (NStepBiLSTM(1, 3, 4, 0.0), (None, None), _inputs([2, 1], 3, numpy.float64)),
            {},
            InvalidType,
            ("n_step_bilstm", "float32 != float64"),
        ),
        (
            _TANH,
            (_HX_OF_ONE, _inputs([3, 2], 3, numpy.float32)),
            {},
            InvalidType,
            ("n_step_rnn", "xs[0].shape[0] <= hx"),
        ),
        # unsorted sequences reorder hx first, which finds the mismatch
        (
            _TANH,
            (_HX_OF_ONE, _inputs([2, 3], 3, numpy.float32)),
            {},
            InvalidType,
            ("Permutate", "x.shape[1] == indices.shape[0]"),
        ),
        (
            NStepLSTM(2, 3, 4, 0.0),
            (numpy.zeros((1, 2, 4), numpy.float32), None, _inputs([2, 3], 3, numpy.float32)),
            {},
            InvalidType,
            ("n_step_lstm", "hx.shape == (2, B, N)"),
        ),
    ]
    + [row for cls in CLASSES for row in _bad_forward_rows(cls)]
)
