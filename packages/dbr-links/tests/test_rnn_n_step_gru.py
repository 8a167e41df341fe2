import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Variable, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import assert_allclose, tolerances
from dbr.links.rnn.n_step_gru import NStepBiGRU, NStepGRU, NStepGRUBase

CLASSES = [NStepGRU, NStepBiGRU]
DTYPES = [numpy.float16, numpy.float32, numpy.float64]


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _gru_step(w, b, x, h):
    r = _sigmoid(w[0] @ x + w[3] @ h + b[0] + b[3])
    z = _sigmoid(w[1] @ x + w[4] @ h + b[1] + b[4])
    candidate = numpy.tanh(w[2] @ x + b[2] + r * (w[5] @ h + b[5]))
    return (1 - z) * candidate + z * h


def _reference(link, hx, xs):
    """The link computed one sequence, layer, direction and step at a time, in float64."""
    ws = [[w.array.astype(numpy.float64) for w in group] for group in link.ws]
    bs = [[b.array.astype(numpy.float64) for b in group] for group in link.bs]
    hy = hx.astype(numpy.float64)
    ys = []
    for s, x in enumerate(xs):
        inputs = x.astype(numpy.float64)
        for layer in range(link.n_layers):
            outputs = []
            for d in range(link.direction):
                k = layer * link.direction + d
                h = hy[k, s]
                out = numpy.empty((len(inputs), link.out_size))
                steps = range(len(inputs)) if d == 0 else reversed(range(len(inputs)))
                for t in steps:
                    h = _gru_step(ws[k], bs[k], inputs[t], h)
                    out[t] = h
                hy[k, s] = h
                outputs.append(out)
            inputs = numpy.concatenate(outputs, axis=1)
        ys.append(inputs)
    return hy, ys


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


def _state(link, batch, dtype, seed=2):
    rng = numpy.random.default_rng(seed)
    shape = (link.n_layers * link.direction, batch, link.out_size)
    return rng.uniform(-1, 1, shape).astype(dtype)


# -- construction ----------------------------------------------------------------


@pytest.mark.parametrize("cls, direction", [(NStepGRU, 1), (NStepBiGRU, 2)])
def test_positional_and_keyword_forms(cls, direction):
    for link in (
        cls(2, 3, 4, 0.25),
        cls(n_layers=2, in_size=3, out_size=4, dropout=0.25),
    ):
        assert isinstance(link, NStepGRUBase)
        assert (link.n_layers, link.out_size, link.dropout) == (2, 4, 0.25)
        assert link.direction == direction
        assert link.use_bi_direction is (direction == 2)
        assert link.n_weights == 6 and link.n_cells == 1
        assert len(link) == 2 * direction
        for k, layer in enumerate(link):
            width = 3 if k < direction else 4 * direction
            for j in range(6):
                assert getattr(layer, f"w{j}").shape == (4, width if j < 3 else 4)
                assert getattr(layer, f"b{j}").shape == (4,)
                numpy.testing.assert_array_equal(getattr(layer, f"b{j}").array, numpy.zeros(4))
        assert link.ws[1][5] is link[1].w5 and link.bs[0][2] is link[0].b2


def test_initializers():
    link = NStepBiGRU(1, 3, 2, 0.0, initialW=initializers.One(), initial_bias=-1.0)
    for layer in link:
        for j in range(6):
            w = getattr(layer, f"w{j}").array
            numpy.testing.assert_array_equal(w, numpy.ones_like(w))
            numpy.testing.assert_array_equal(getattr(layer, f"b{j}").array, numpy.full(2, -1.0))
    numpy.random.seed(0)
    link = NStepGRU(2, 400, 300, 0.0)
    assert abs(link[0].w0.array.std() - (1 / 400) ** 0.5) < 0.005
    assert abs(link[1].w2.array.std() - (1 / 300) ** 0.5) < 0.005


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ((1, 3, 0, 0.0), {}, ValueError, r"^NStepBiGRU: expected out_size .* got 0$"),
        ((True, 3, 4, 0.0), {}, ValueError, r"expected n_layers to be a positive int, got True"),
        ((1, 3, 4, -0.1), {}, ValueError, r"NStepBiGRU: expected dropout in \[0, 1\), got -0.1"),
        ((1, 3, 4, 0.0), {"activation": "relu"}, ValueError, r"the activation argument"),
        ((1, 3, 4, 0.0), {"wscale": 1}, TypeError, r"unexpected keyword argument 'wscale'"),
    ],
)
def test_bad_constructor_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        NStepBiGRU(*args, **kwargs)


def test_param_names(link_check):
    assert link_check.param_names(NStepGRU(2, 3, 4, 0.0)) == [
        "/0/b0", "/0/b1", "/0/b2", "/0/b3", "/0/b4", "/0/b5",
        "/0/w0", "/0/w1", "/0/w2", "/0/w3", "/0/w4", "/0/w5",
        "/1/b0", "/1/b1", "/1/b2", "/1/b3", "/1/b4", "/1/b5",
        "/1/w0", "/1/w1", "/1/w2", "/1/w3", "/1/w4", "/1/w5",
    ]  # fmt: skip
    assert link_check.param_names(NStepBiGRU(1, None, 4, 0.0)) == [
        "/0/b0", "/0/b1", "/0/b2", "/0/b3", "/0/b4", "/0/b5",
        "/0/w0", "/0/w1", "/0/w2", "/0/w3", "/0/w4", "/0/w5",
        "/1/b0", "/1/b1", "/1/b2", "/1/b3", "/1/b4", "/1/b5",
        "/1/w0", "/1/w1", "/1/w2", "/1/w3", "/1/w4", "/1/w5",
    ]  # fmt: skip


# -- forward values -----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("lengths", [[4, 4, 2, 1], [1, 3, 5, 3], [3]])
def test_forward_against_reference(cls, lengths):
    link = _make(cls, numpy.float64, 2, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs(lengths, 3, numpy.float64)
    hx = _state(link, len(xs), numpy.float64)
    hy, ys = link(hx, xs)
    hy_ref, ys_ref = _reference(link, hx, xs)
    assert isinstance(ys, list) and len(ys) == len(lengths)
    assert hy.shape == hx.shape
    assert_allclose(hy.array, hy_ref, **tolerances("float64"))
    for y, y_ref, n in zip(ys, ys_ref, lengths):
        assert y.shape == (n, 4 * link.direction)
        assert_allclose(y.array, y_ref, **tolerances("float64"))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_dtypes(cls, dtype):
    link = _make(cls, dtype, 1, 3, 4, 0.0)
    _randomize(link)
    xs = _inputs([2, 4, 3], 3, dtype)
    hx = _state(link, 3, dtype)
    hy, ys = link(Variable(hx), [Variable(x) for x in xs])
    hy_ref, ys_ref = _reference(link, hx, xs)
    tol = tolerances(dtype) if dtype != numpy.float16 else {"atol": 5e-3, "rtol": 5e-3}
    assert hy.dtype == dtype
    assert_allclose(hy.array, hy_ref, **tol)
    for y, y_ref in zip(ys, ys_ref):
        assert y.dtype == dtype
        assert_allclose(y.array, y_ref, **tol)


@pytest.mark.parametrize("cls", CLASSES)
def test_none_state_is_zeros(cls):
    link = cls(2, 3, 4, 0.0)
    xs = _inputs([3, 1, 4], 3, numpy.float32)
    zeros = numpy.zeros((2 * link.direction, 3, 4), numpy.float32)
    hy, ys = link(None, xs)
    hy0, ys0 = link(zeros, xs)
    numpy.testing.assert_array_equal(hy.array, hy0.array)
    for y, y0 in zip(ys, ys0):
        numpy.testing.assert_array_equal(y.array, y0.array)
    numpy.testing.assert_array_equal(link.init_hx(xs).array, zeros)


@pytest.mark.parametrize("cls", CLASSES)
def test_lazy_in_size(cls):
    link = _make(cls, numpy.float64, 2, None, 4, 0.0)
    first = link.direction
    for k, layer in enumerate(link):
        for j in range(6):
            assert (getattr(layer, f"w{j}").array is None) == (k < first and j < 3)
    xs = _inputs([2, 3], 5, numpy.float64)
    with using_config("dtype", numpy.float64):
        hy, ys = link(None, xs)
    for k in range(first):
        for j in range(3):
            w = getattr(link[k], f"w{j}")
            assert w.shape == (4, 5) and w.dtype == numpy.float64
    hy_ref, ys_ref = _reference(link, numpy.zeros(hy.shape), xs)
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
        hy_a, ys_a = link(None, xs)
        hy_b, ys_b = link(None, xs)
    hy_ref, ys_ref = _reference(link, numpy.zeros(hy_a.shape), xs)
    numpy.testing.assert_array_equal(hy_a.array, hy_b.array)
    assert_allclose(hy_a.array, hy_ref, **tolerances("float64"))
    for a, b, ref in zip(ys_a, ys_b, ys_ref):
        numpy.testing.assert_array_equal(a.array, b.array)
        assert_allclose(a.array, ref, **tolerances("float64"))
    numpy.random.seed(0)
    _, ys_train = link(None, xs)
    assert not all(numpy.allclose(y.array, ref) for y, ref in zip(ys_train, ys_ref))


# -- gradients ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_backward(cls, dtype):
    link = _make(cls, dtype, 2, 2, 3, 0.0)
    _randomize(link)
    lengths = [1, 3, 2]
    xs = _inputs(lengths, 2, dtype)
    hx = _state(link, 3, dtype)
    rng = numpy.random.default_rng(3)
    width = 3 * link.direction
    gys = [rng.uniform(-1, 1, (n, width)).astype(dtype) for n in lengths]
    ghy = rng.uniform(-1, 1, hx.shape).astype(dtype)

    def f(hx, *xs):
        hy, ys = link(hx, list(xs))
        return (hy, *ys)

    if dtype == numpy.float16:
        tol = {"atol": 5e-2, "rtol": 5e-2, "dtype": numpy.float64}
    else:
        tol = tolerances(dtype, "backward")
    check_backward(f, (hx, *xs), (ghy, *gys), params=tuple(link.params()), **tol)


def test_gradients_through_unsorted_sequences_match_composed_functions():
    link = _make(NStepGRU, numpy.float64, 1, 2, 3, 0.0)
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
    for name, p in link.namedparams():
        assert_allclose(p.grad, grads[name], **tolerances("float64"))
    for x, gx in zip(xs, gxs):
        assert_allclose(x.grad, gx, **tolerances("float64"))


# -- serialization and copies ---------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_round_trip(cls, link_check):
    link = cls(2, 3, 4, 0.0)
    _randomize(link)
    fresh = link_check.round_trip(link, cls(2, None, 4, 0.0))
    xs = _inputs([3, 2], 3, numpy.float32)
    hy, _ = link(None, xs)
    hy2, _ = fresh(None, xs)
    numpy.testing.assert_array_equal(hy.array, hy2.array)


@pytest.mark.parametrize("cls", CLASSES)
def test_copy_modes(cls, link_check):
    link = cls(2, 3, 4, 0.0)
    link_check.copy_modes(link)
    shared = link.copy("share")
    assert shared.ws[1][4] is shared[1].w4 and shared.ws[1][4] is not link[1].w4
    assert shared.ws[1][4].array is link[1].w4.array
    xs = _inputs([2, 3], 3, numpy.float32)
    hy, _ = link(None, xs)
    hy2, _ = shared(None, xs)
    numpy.testing.assert_array_equal(hy.array, hy2.array)


# -- bad input --------------------------------------------------------------------


def test_wrong_input_size_after_initialisation():
    link = NStepBiGRU(1, 3, 4, 0.0)
    with pytest.raises(InvalidType, match=r"n_step_bigru[\s\S]*ws\[0\]\[0\]\.shape == \(4, 2\)"):
        link(None, _inputs([2], 2, numpy.float32))


def test_wrong_dtype():
    link = NStepGRU(1, 3, 4, 0.0)
    with pytest.raises(InvalidType, match=r"n_step_gru[\s\S]*float32 != float16"):
        link(None, _inputs([2, 1], 3, numpy.float16))


def test_bad_forward_arguments():
    link = NStepGRU(1, 3, 4, 0.0)
    xs = _inputs([2], 3, numpy.float32)
    with pytest.raises(ValueError, match=r"NStepGRU.forward: the train argument"):
        link(None, xs, train=True)
    with pytest.raises(TypeError, match=r"NStepGRU.forward: expected xs to be a non-empty list"):
        link(None, numpy.stack(xs))
