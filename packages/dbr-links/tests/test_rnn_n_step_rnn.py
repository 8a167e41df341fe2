import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Variable, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import assert_allclose, tolerances
from dbr.links.rnn.n_step_rnn import (
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepRNNBase,
    NStepRNNReLU,
    NStepRNNTanh,
)

CLASSES = [NStepRNNTanh, NStepRNNReLU, NStepBiRNNTanh, NStepBiRNNReLU]
ACTIVATIONS = {
    NStepRNNTanh: numpy.tanh,
    NStepRNNReLU: lambda z: numpy.maximum(z, 0),
    NStepBiRNNTanh: numpy.tanh,
    NStepBiRNNReLU: lambda z: numpy.maximum(z, 0),
}
DTYPES = [numpy.float16, numpy.float32, numpy.float64]


def _reference(link, hx, xs):
    """The link computed one sequence, layer, direction and step at a time, in float64."""
    act = ACTIVATIONS[type(link)]
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
                (w0, w1), (b0, b1) = ws[k], bs[k]
                h = hy[k, s]
                out = numpy.empty((len(inputs), link.out_size))
                steps = range(len(inputs)) if d == 0 else reversed(range(len(inputs)))
                for t in steps:
                    h = act(w0 @ inputs[t] + b0 + w1 @ h + b1)
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


@pytest.mark.parametrize("cls", CLASSES)
def test_positional_and_keyword_forms(cls):
    direction = 2 if cls in (NStepBiRNNTanh, NStepBiRNNReLU) else 1
    for link in (
        cls(3, 2, 5, 0.5),
        cls(n_layers=3, in_size=2, out_size=5, dropout=0.5),
        cls(3, 2, 5, 0.5, initialW=None, initial_bias=None),
    ):
        assert isinstance(link, NStepRNNBase)
        assert (link.n_layers, link.out_size, link.dropout) == (3, 5, 0.5)
        assert link.direction == direction
        assert link.use_bi_direction is (direction == 2)
        assert link.n_weights == 2 and link.n_cells == 1
        assert len(link) == 3 * direction
        for k, layer in enumerate(link):
            assert layer.w0.shape == (5, 2 if k < direction else 5 * direction)
            assert layer.w1.shape == (5, 5)
            numpy.testing.assert_array_equal(layer.b0.array, numpy.zeros(5))
            numpy.testing.assert_array_equal(layer.b1.array, numpy.zeros(5))
        assert [[w.name for w in group] for group in link.ws] == [["w0", "w1"]] * len(link)
        assert link.bs[-1][1] is link[-1].b1


def test_initializers():
    init = numpy.arange(4, dtype=numpy.float32).reshape(2, 2)
    link = NStepRNNTanh(1, 2, 2, 0.0, initialW=init, initial_bias=initializers.One())
    numpy.testing.assert_array_equal(link[0].w0.array, init)
    numpy.testing.assert_array_equal(link[0].w1.array, init)
    numpy.testing.assert_array_equal(link[0].b1.array, numpy.ones(2))
    numpy.random.seed(0)
    link = NStepBiRNNReLU(2, 400, 300, 0.0)
    assert abs(link[0].w0.array.std() - (1 / 400) ** 0.5) < 0.005
    assert abs(link[3].w0.array.std() - (1 / 600) ** 0.5) < 0.005


def test_base_class_needs_rnn():
    link = NStepRNNBase(1, 2, 3, 0.0)
    with pytest.raises(NotImplementedError, match=r"NStepRNNBase.rnn"):
        link(None, _inputs([2], 2, numpy.float32))


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ((-1, 3, 4, 0.0), {}, ValueError, r"^NStepRNNReLU: expected n_layers .* got -1$"),
        ((1, "3", 4, 0.0), {}, ValueError, r"in_size to be a positive int or None, got '3'"),
        ((1, 3, None, 0.0), {}, ValueError, r"out_size to be a positive int, got None"),
        ((1, 3, 4, None), {}, TypeError, r"expected dropout to be a float, got None"),
        ((1, 3, 4, 0.0), {"use_cudnn": "never"}, ValueError, r"the use_cudnn argument"),
        ((1, 3, 4, 0.0), {"activation": "tanh"}, ValueError, r"the activation argument"),
    ],
)
def test_bad_constructor_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        NStepRNNReLU(*args, **kwargs)


def test_param_names(link_check):
    assert link_check.param_names(NStepRNNTanh(3, 4, 5, 0.0)) == [
        "/0/b0", "/0/b1", "/0/w0", "/0/w1",
        "/1/b0", "/1/b1", "/1/w0", "/1/w1",
        "/2/b0", "/2/b1", "/2/w0", "/2/w1",
    ]  # fmt: skip
    assert link_check.param_names(NStepBiRNNReLU(2, None, 5, 0.0)) == [
        "/0/b0", "/0/b1", "/0/w0", "/0/w1",
        "/1/b0", "/1/b1", "/1/w0", "/1/w1",
        "/2/b0", "/2/b1", "/2/w0", "/2/w1",
        "/3/b0", "/3/b1", "/3/w0", "/3/w1",
    ]  # fmt: skip


# -- forward values -----------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("lengths", [[6, 3, 2, 2], [2, 6, 3, 2, 1], [5]])
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
    init = link.init_hx(xs)
    assert init.dtype == numpy.float32
    numpy.testing.assert_array_equal(init.array, zeros)


@pytest.mark.parametrize("cls", CLASSES)
def test_lazy_in_size(cls):
    link = _make(cls, numpy.float64, 2, None, 4, 0.0)
    first = link.direction
    for k, layer in enumerate(link):
        assert (layer.w0.array is None) == (k < first)
        assert layer.w1.array is not None
    xs = _inputs([2, 3], 5, numpy.float64)
    with using_config("dtype", numpy.float64):
        hy, ys = link(None, xs)
    for k in range(first):
        assert link[k].w0.shape == (4, 5) and link[k].w0.dtype == numpy.float64
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
    lengths = [2, 1, 3]
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


def test_bi_gradients_match_composed_functions():
    link = _make(NStepBiRNNTanh, numpy.float64, 1, 2, 3, 0.0)
    _randomize(link)
    xs = [Variable(x) for x in _inputs([2, 3], 2, numpy.float64)]
    hx = Variable(_state(link, 2, numpy.float64))
    link.cleargrads()
    hy, ys = link(hx, xs)
    (F.sum(hy**2) + F.sum(F.concat(ys, axis=0) ** 3)).backward()
    grads = {name: p.grad.copy() for name, p in link.namedparams()}
    gxs = [x.grad.copy() for x in xs]
    ghx = hx.grad.copy()
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
    for name, p in link.namedparams():
        assert_allclose(p.grad, grads[name], **tolerances("float64"))
    for x, gx in zip(xs, gxs):
        assert_allclose(x.grad, gx, **tolerances("float64"))
    assert_allclose(hx.grad, ghx, **tolerances("float64"))


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
    fresh = link.copy("init")
    assert fresh.ws[0][0] is fresh[0].w0
    assert fresh(None, _inputs([2], 3, numpy.float32))[0].shape == (2 * link.direction, 1, 4)


def test_lazy_copy_stays_lazy():
    link = NStepRNNTanh(1, None, 4, 0.0)
    copied = link.copy("copy")
    assert copied[0].w0.array is None
    copied(None, _inputs([2], 6, numpy.float32))
    assert copied[0].w0.shape == (4, 6) and link[0].w0.array is None


# -- bad input --------------------------------------------------------------------


def test_wrong_input_size_after_initialisation():
    link = NStepRNNReLU(1, None, 4, 0.0)
    link(None, _inputs([2], 3, numpy.float32))
    with pytest.raises(InvalidType, match=r"n_step_rnn[\s\S]*ws\[0\]\[0\]\.shape == \(4, 2\)"):
        link(None, _inputs([2], 2, numpy.float32))


def test_wrong_dtype():
    link = NStepBiRNNTanh(1, 3, 4, 0.0)
    with pytest.raises(InvalidType, match=r"n_step_birnn[\s\S]*float32 != float64"):
        link(None, _inputs([2], 3, numpy.float64))


def test_wrong_state_batch():
    link = NStepRNNTanh(1, 3, 4, 0.0)
    hx = numpy.zeros((1, 1, 4), numpy.float32)
    with pytest.raises(InvalidType, match=r"n_step_rnn[\s\S]*xs\[0\]\.shape\[0\] <= hx"):
        link(hx, _inputs([3, 2], 3, numpy.float32))
    # unsorted sequences reorder hx first, which finds the mismatch
    with pytest.raises(InvalidType, match=r"Permutate[\s\S]*x\.shape\[1\] == indices\.shape\[0\]"):
        link(hx, _inputs([2, 3], 3, numpy.float32))
