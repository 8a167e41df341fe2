import os

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Variable, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.serializers import load_npz
from dbr.core.testing import assert_allclose, tolerances
from dbr.links.rnn.n_step_lstm import NStepBiLSTM, NStepLSTM, NStepLSTMBase

CLASSES = [NStepLSTM, NStepBiLSTM]
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DTYPES = [numpy.float16, numpy.float32, numpy.float64]


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _lstm_step(w, b, x, h, c):
    # Chainer's roles: w0/w4 input gate, w1/w5 forget gate, w2/w6 cell input, w3/w7 output gate
    i = _sigmoid(w[0] @ x + w[4] @ h + b[0] + b[4])
    f = _sigmoid(w[1] @ x + w[5] @ h + b[1] + b[5])
    a = numpy.tanh(w[2] @ x + w[6] @ h + b[2] + b[6])
    o = _sigmoid(w[3] @ x + w[7] @ h + b[3] + b[7])
    c = f * c + i * a
    return o * numpy.tanh(c), c


def _reference(link, hx, cx, xs):
    """The link computed one sequence, layer, direction and step at a time, in float64."""
    ws = [[w.array.astype(numpy.float64) for w in group] for group in link.ws]
    bs = [[b.array.astype(numpy.float64) for b in group] for group in link.bs]
    hy = hx.astype(numpy.float64)
    cy = cx.astype(numpy.float64)
    ys = []
    for s, x in enumerate(xs):
        inputs = x.astype(numpy.float64)
        for layer in range(link.n_layers):
            outputs = []
            for d in range(link.direction):
                k = layer * link.direction + d
                h, c = hy[k, s], cy[k, s]
                out = numpy.empty((len(inputs), link.out_size))
                steps = range(len(inputs)) if d == 0 else reversed(range(len(inputs)))
                for t in steps:
                    h, c = _lstm_step(ws[k], bs[k], inputs[t], h, c)
                    out[t] = h
                hy[k, s], cy[k, s] = h, c
                outputs.append(out)
            inputs = numpy.concatenate(outputs, axis=1)
        ys.append(inputs)
    return hy, cy, ys


def _make(cls, dtype, *args, **kwargs):
    with using_config("dtype", numpy.dtype(dtype)):
        return cls(*args, **kwargs)


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
    return tuple(rng.uniform(-1, 1, shape).astype(dtype) for _ in range(2))


# -- construction ----------------------------------------------------------------


@pytest.mark.parametrize("cls, direction", [(NStepLSTM, 1), (NStepBiLSTM, 2)])
def test_positional_and_keyword_forms(cls, direction):
    for link in (
        cls(2, 3, 4, 0.25),
        cls(n_layers=2, in_size=3, out_size=4, dropout=0.25),
    ):
        assert isinstance(link, NStepLSTMBase)
        assert (link.n_layers, link.out_size, link.dropout) == (2, 4, 0.25)
        assert link.direction == direction
        assert link.use_bi_direction is (direction == 2)
        assert link.n_weights == 8 and link.n_cells == 2
        assert len(link) == 2 * direction
        for k, layer in enumerate(link):
            width = 3 if k < direction else 4 * direction
            for j in range(8):
                assert getattr(layer, f"w{j}").shape == (4, width if j < 4 else 4)
                assert getattr(layer, f"b{j}").shape == (4,)
                numpy.testing.assert_array_equal(getattr(layer, f"b{j}").array, numpy.zeros(4))
        assert link.ws[1][5] is link[1].w5 and link.bs[0][7] is link[0].b7


def test_initializers():
    link = NStepLSTM(1, 3, 2, 0.0, initialW=initializers.One(), initial_bias=0.5)
    for j in range(8):
        w = getattr(link[0], f"w{j}").array
        numpy.testing.assert_array_equal(w, numpy.ones_like(w))
        numpy.testing.assert_array_equal(getattr(link[0], f"b{j}").array, numpy.full(2, 0.5))
    numpy.random.seed(0)
    link = NStepLSTM(1, 400, 300, 0.0)
    assert link[0].w0.dtype == numpy.float32
    assert abs(link[0].w0.array.std() - (1 / 400) ** 0.5) < 0.005
    assert abs(link[0].w4.array.std() - (1 / 300) ** 0.5) < 0.005


def test_initialW_is_keyword_only():
    with pytest.raises(TypeError):
        NStepLSTM(1, 3, 2, 0.0, initializers.One())


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ((0, 3, 4, 0.0), {}, ValueError, r"^NStepLSTM: expected n_layers .* got 0$"),
        ((1, -3, 4, 0.0), {}, ValueError, r"in_size to be a positive int or None, got -3"),
        ((1, 3, 4.0, 0.0), {}, ValueError, r"expected out_size to be a positive int, got 4.0"),
        ((1, 3, 4, 1.0), {}, ValueError, r"NStepLSTM: expected dropout in \[0, 1\), got 1.0"),
        ((1, 3, 4, "0.1"), {}, TypeError, r"NStepLSTM: expected dropout to be a float, got '0.1'"),
        ((1, 3, 4, 0.0), {"use_cudnn": True}, ValueError, r"NStepLSTM: the use_cudnn argument"),
        ((1, 3, 4, 0.0), {"use_bi_direction": True}, ValueError, r"use_bi_direction"),
        ((1, 3, 4, 0.0), {"nobias": True}, TypeError, r"unexpected keyword argument 'nobias'"),
    ],
)
def test_bad_constructor_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        NStepLSTM(*args, **kwargs)


def test_param_names(link_check):
    assert link_check.param_names(NStepLSTM(1, 3, 4, 0.0)) == [
        "/0/b0", "/0/b1", "/0/b2", "/0/b3", "/0/b4", "/0/b5", "/0/b6", "/0/b7",
        "/0/w0", "/0/w1", "/0/w2", "/0/w3", "/0/w4", "/0/w5", "/0/w6", "/0/w7",
    ]  # fmt: skip
    assert link_check.param_names(NStepBiLSTM(1, None, 4, 0.0)) == [
        "/0/b0", "/0/b1", "/0/b2", "/0/b3", "/0/b4", "/0/b5", "/0/b6", "/0/b7",
        "/0/w0", "/0/w1", "/0/w2", "/0/w3", "/0/w4", "/0/w5", "/0/w6", "/0/w7",
        "/1/b0", "/1/b1", "/1/b2", "/1/b3", "/1/b4", "/1/b5", "/1/b6", "/1/b7",
        "/1/w0", "/1/w1", "/1/w2", "/1/w3", "/1/w4", "/1/w5", "/1/w6", "/1/w7",
    ]  # fmt: skip
    names = link_check.param_names(NStepBiLSTM(2, 3, 4, 0.0))
    assert len(names) == 64 and names[-2:] == ["/3/w6", "/3/w7"]
    assert link_check.persistent_names(NStepBiLSTM(1, 3, 4, 0.0)) == []


# -- forward values -----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 5, 3], [4]])
def test_forward_against_reference(cls, lengths):
    link = _make(cls, numpy.float64, 2, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs(lengths, 3, numpy.float64)
    hx, cx = _states(link, len(xs), numpy.float64)
    hy, cy, ys = link(hx, cx, xs)
    hy_ref, cy_ref, ys_ref = _reference(link, hx, cx, xs)
    assert isinstance(ys, list) and len(ys) == len(lengths)
    assert hy.shape == cy.shape == hx.shape
    assert_allclose(hy.array, hy_ref, **tolerances("float64"))
    assert_allclose(cy.array, cy_ref, **tolerances("float64"))
    for y, y_ref, n in zip(ys, ys_ref, lengths):
        assert y.shape == (n, 4 * link.direction)
        assert_allclose(y.array, y_ref, **tolerances("float64"))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_dtypes(cls, dtype):
    link = _make(cls, dtype, 1, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs([2, 4, 3], 3, dtype)
    hx, cx = _states(link, 3, dtype)
    hy, cy, ys = link(Variable(hx), Variable(cx), [Variable(x) for x in xs])
    hy_ref, cy_ref, ys_ref = _reference(link, hx, cx, xs)
    tol = tolerances(dtype) if dtype != numpy.float16 else {"atol": 5e-3, "rtol": 5e-3}
    assert hy.dtype == cy.dtype == dtype
    assert_allclose(hy.array, hy_ref, **tol)
    assert_allclose(cy.array, cy_ref, **tol)
    for y, y_ref in zip(ys, ys_ref):
        assert y.dtype == dtype
        assert_allclose(y.array, y_ref, **tol)


@pytest.mark.parametrize("cls", CLASSES)
def test_none_states_are_zeros(cls):
    link = cls(2, 3, 4, 0.0)
    xs = _inputs([3, 1, 4], 3, numpy.float32)
    zeros = numpy.zeros((2 * link.direction, 3, 4), numpy.float32)
    hy, cy, ys = link(None, None, xs)
    hy0, cy0, ys0 = link(zeros, zeros, xs)
    numpy.testing.assert_array_equal(hy.array, hy0.array)
    numpy.testing.assert_array_equal(cy.array, cy0.array)
    for y, y0 in zip(ys, ys0):
        numpy.testing.assert_array_equal(y.array, y0.array)
    init = link.init_hx(xs)
    assert isinstance(init, Variable)
    numpy.testing.assert_array_equal(init.array, zeros)


@pytest.mark.parametrize("cls", CLASSES)
def test_lazy_in_size(cls):
    link = _make(cls, numpy.float64, 2, None, 4, 0.0)
    first = link.direction
    for k, layer in enumerate(link):
        for j in range(8):
            w = getattr(layer, f"w{j}")
            assert (w.array is None) == (k < first and j < 4)
    xs = _inputs([2, 3], 5, numpy.float64)
    with using_config("dtype", numpy.float64):
        hy, cy, ys = link(None, None, xs)
    for k in range(first):
        for j in range(4):
            w = getattr(link[k], f"w{j}")
            assert w.shape == (4, 5) and w.dtype == numpy.float64
    zeros = numpy.zeros(hy.shape)
    hy_ref, cy_ref, ys_ref = _reference(link, zeros, zeros, xs)
    assert_allclose(hy.array, hy_ref, **tolerances("float64"))
    for y, y_ref in zip(ys, ys_ref):
        assert_allclose(y.array, y_ref, **tolerances("float64"))


# -- dropout and modes ------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_dropout_train_versus_test(cls):
    link = _make(cls, numpy.float64, 2, 3, 4, 0.5)
    _randomize(link)
    xs = _inputs([3, 4], 3, numpy.float64)
    with using_config("train", False):
        _, _, ys_a = link(None, None, xs)
        _, _, ys_b = link(None, None, xs)
    zeros = numpy.zeros((2 * link.direction, 2, 4))
    _, _, ys_ref = _reference(link, zeros, zeros, xs)
    for a, b, ref in zip(ys_a, ys_b, ys_ref):
        numpy.testing.assert_array_equal(a.array, b.array)
        assert_allclose(a.array, ref, **tolerances("float64"))
    numpy.random.seed(0)
    _, _, ys_train = link(None, None, xs)
    assert not all(numpy.allclose(y.array, ref) for y, ref in zip(ys_train, ys_ref))


def test_dropout_spares_the_first_layer_input():
    link = _make(NStepLSTM, numpy.float64, 1, 3, 4, 0.9)
    _randomize(link)
    xs = _inputs([3, 2], 3, numpy.float64)
    _, _, ys = link(None, None, xs)
    zeros = numpy.zeros((1, 2, 4))
    _, _, ys_ref = _reference(link, zeros, zeros, xs)
    for y, ref in zip(ys, ys_ref):
        assert_allclose(y.array, ref, **tolerances("float64"))


# -- gradients ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_backward(cls, dtype):
    link = _make(cls, dtype, 2, 2, 3, 0.0)
    _randomize(link)
    lengths = [2, 3, 1]
    xs = _inputs(lengths, 2, dtype)
    hx, cx = _states(link, 3, dtype)
    rng = numpy.random.default_rng(3)
    width = 3 * link.direction
    gys = [rng.uniform(-1, 1, (n, width)).astype(dtype) for n in lengths]
    ghy, gcy = (rng.uniform(-1, 1, hx.shape).astype(dtype) for _ in range(2))

    def f(hx, cx, *xs):
        hy, cy, ys = link(hx, cx, list(xs))
        return (hy, cy, *ys)

    if dtype == numpy.float16:
        tol = {"atol": 5e-2, "rtol": 5e-2, "dtype": numpy.float64}
    else:
        tol = tolerances(dtype, "backward")
    check_backward(f, (hx, cx, *xs), (ghy, gcy, *gys), params=tuple(link.params()), **tol)


def test_parameter_gradients_match_composed_functions():
    link = _make(NStepLSTM, numpy.float64, 1, 2, 3, 0.0)
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
    for name, p in link.namedparams():
        assert_allclose(p.grad, grads[name], **tolerances("float64"))


# -- serialization and copies ---------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_round_trip(cls, link_check):
    link = cls(2, 3, 4, 0.0)
    _randomize(link)
    fresh = link_check.round_trip(link, cls(2, None, 4, 0.0))
    xs = _inputs([3, 2], 3, numpy.float32)
    hy, cy, _ = link(None, None, xs)
    hy2, cy2, _ = fresh(None, None, xs)
    numpy.testing.assert_array_equal(hy.array, hy2.array)
    numpy.testing.assert_array_equal(cy.array, cy2.array)


@pytest.mark.parametrize(
    "cls, file, prefix",
    [(NStepLSTM, "n_step_lstm_link.npz", "uni"), (NStepBiLSTM, "n_step_bilstm_link.npz", "bi")],
)
def test_loads_a_chainer_model_and_gives_its_outputs(cls, file, prefix):
    # Written by Chainer 7.8.1's save_npz from its own link; see
    # dbr-functions/tests/fixtures/make_rnn_chainer.py, which made these files.
    link = _make(cls, numpy.float64, 2, 3, 2, 0.0)
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
def test_copy_modes(cls, link_check):
    link = cls(2, 3, 4, 0.0)
    link_check.copy_modes(link)
    copied = link.copy("copy")
    assert copied.ws[0][0] is copied[0].w0 and copied.ws[0][0] is not link[0].w0
    assert copied.bs[-1][7] is copied[-1].b7
    xs = _inputs([2, 3], 3, numpy.float32)
    hy, _, _ = link(None, None, xs)
    hy2, _, _ = copied(None, None, xs)
    numpy.testing.assert_array_equal(hy.array, hy2.array)


# -- bad input --------------------------------------------------------------------


def test_wrong_input_size_after_initialisation():
    link = NStepLSTM(1, 3, 4, 0.0)
    with pytest.raises(InvalidType, match=r"n_step_lstm[\s\S]*ws\[0\]\[0\]\.shape == \(4, 5\)"):
        link(None, None, _inputs([2], 5, numpy.float32))


def test_wrong_dtype():
    link = NStepBiLSTM(1, 3, 4, 0.0)
    with pytest.raises(InvalidType, match=r"n_step_bilstm[\s\S]*float32 != float64"):
        link(None, None, _inputs([2], 3, numpy.float64))


def test_wrong_state_shape():
    link = NStepLSTM(2, 3, 4, 0.0)
    hx = numpy.zeros((1, 2, 4), numpy.float32)
    with pytest.raises(InvalidType, match=r"n_step_lstm[\s\S]*hx\.shape == \(2, B, N\)"):
        link(hx, None, _inputs([2, 3], 3, numpy.float32))


def test_bad_forward_arguments():
    link = NStepLSTM(1, 3, 4, 0.0)
    xs = _inputs([2], 3, numpy.float32)
    with pytest.raises(ValueError, match=r"NStepLSTM.forward: the train argument"):
        link(None, None, xs, train=False)
    with pytest.raises(TypeError, match=r"NStepLSTM.forward: got an unexpected keyword"):
        link(None, None, xs, foo=1)
    with pytest.raises(TypeError, match=r"NStepLSTM.forward: expected xs to be a non-empty list"):
        link(None, None, xs[0])
    with pytest.raises(TypeError, match=r"expected xs to be a non-empty list"):
        link(None, None, [])
