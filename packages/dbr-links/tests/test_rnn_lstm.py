import os

import numpy
import pytest
from rnn_reference import lstm_step

from dbr.core import InvalidType, Variable, initializers
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_link_lifecycle,
    check_stateful_backward,
    param_names,
    persistent_names,
)
from dbr.links.rnn.lstm import LSTM, StatelessLSTM

IN, OUT = 3, 2


def _make(cls, dtype, *args, **kwargs):
    kwargs.setdefault("bias_init", initializers.Normal(0.5))
    return make_link(cls, dtype, *args, **kwargs)


def _inputs(dtype, n_steps=3, batch=4, size=IN):
    return [numpy.random.uniform(-1, 1, (batch, size)).astype(dtype) for _ in range(n_steps)]


class _Recorder:
    """An initializer writing a constant and remembering the shapes it was called on."""

    def __init__(self, value):
        self.value = value
        self.shapes = []

    def __call__(self, array):
        self.shapes.append(array.shape)
        array[...] = self.value


# -- construction -----------------------------------------------------------------
def test_positional_and_keyword_forms():
    link = LSTM(IN, OUT)
    assert link.state_size == OUT
    assert link.upward.W.shape == (4 * OUT, IN) and link.upward.b.shape == (4 * OUT,)
    assert link.lateral.W.shape == (4 * OUT, OUT) and link.lateral.b is None
    assert link.c is None and link.h is None
    link = LSTM(
        in_size=IN,
        out_size=OUT,
        lateral_init=0.25,
        upward_init=initializers.One(),
        bias_init=0.5,
        forget_bias_init=-1.0,
    )
    numpy.testing.assert_array_equal(link.lateral.W.array, numpy.full((8, 2), 0.25, "f"))
    numpy.testing.assert_array_equal(link.upward.W.array, numpy.ones((8, 3), "f"))
    numpy.testing.assert_array_equal(
        link.upward.b.array, numpy.array([0.5, 0.5, -1, 0.5] * OUT, "f")
    )
    link = LSTM(IN, OUT, 0.0, 1.0, 2.0, 3.0)
    numpy.testing.assert_array_equal(link.upward.b.array, numpy.array([2, 2, 3, 2] * OUT, "f"))


def test_default_biases_follow_gate_layout():
    # F.lstm reads unit j's gates at 4j..4j+3 as a, i, f, o; the forget bias is 1.
    link = StatelessLSTM(IN, 3)
    numpy.testing.assert_array_equal(link.upward.b.array, numpy.array([0, 0, 1, 0] * 3, "f"))


def test_initializers_see_one_gate_block():
    upward, lateral = _Recorder(1.0), _Recorder(2.0)
    bias, forget = _Recorder(3.0), _Recorder(4.0)
    LSTM(
        IN, OUT, lateral_init=lateral, upward_init=upward, bias_init=bias, forget_bias_init=forget
    )
    assert upward.shapes == [(OUT, IN)] * 4
    assert lateral.shapes == [(OUT, OUT)] * 4
    assert bias.shapes == [(1, OUT)] * 3 and forget.shapes == [(1, OUT)]


@pytest.mark.parametrize("cls", [LSTM, StatelessLSTM])
@pytest.mark.parametrize("args", [(OUT,), (None, OUT)])
def test_lazy_in_size(cls, args):
    link = cls(*args, forget_bias_init=2.0)
    assert link.upward.W.array is None and link.upward.W.dtype == numpy.float32
    assert link.lateral.W.shape == (4 * OUT, OUT)
    x = numpy.random.uniform(-1, 1, (4, 5)).astype(numpy.float32)
    y = link(x) if cls is LSTM else link(None, None, x)[1]
    assert link.upward.W.shape == (4 * OUT, 5)
    assert y.shape == (4, OUT)
    numpy.testing.assert_array_equal(link.upward.b.array, numpy.array([0, 0, 2, 0] * OUT, "f"))
    assert_allclose(y.array, lstm_step(link, None, None, x)[1], **tolerances("float32"))


# -- the stateful LSTM ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_steps_against_reference(dtype):
    link = _make(LSTM, dtype, IN, OUT)
    c = h = None
    for x in _inputs(dtype):
        y = link(x)
        c, h = lstm_step(link, c, h, x)
        assert y.dtype == dtype and y.shape == (4, OUT)
        assert_allclose(y.array, h, **tolerances(dtype))
        assert_allclose(link.c.array, c, **tolerances(dtype))
        assert link.h is y


def test_reset_state_restarts_the_sequence():
    link = LSTM(IN, OUT)
    xs = _inputs(numpy.float32)
    first = [link(x).array for x in xs]
    link.reset_state()
    assert link.c is None and link.h is None
    for x, y in zip(xs, first):
        numpy.testing.assert_array_equal(link(x).array, y)


def test_set_state():
    link = LSTM(IN, OUT)
    c = numpy.random.uniform(-1, 1, (4, OUT)).astype(numpy.float32)
    h = numpy.random.uniform(-1, 1, (4, OUT)).astype(numpy.float32)
    link.set_state(Variable(c), Variable(h))
    x = _inputs(numpy.float32, 1)[0]
    y = link(x)
    c_ref, h_ref = lstm_step(link, c, h, x)
    assert_allclose(y.array, h_ref, **tolerances("float32"))
    assert_allclose(link.c.array, c_ref, **tolerances("float32"))


def test_shrinking_batch_updates_the_first_rows():
    link = LSTM(IN, OUT)
    x1 = numpy.random.uniform(-1, 1, (3, IN)).astype(numpy.float32)
    x2 = numpy.random.uniform(-1, 1, (2, IN)).astype(numpy.float32)
    link(x1)
    c1, h1 = link.c.array.copy(), link.h.array.copy()
    y = link(x2)
    c2, h2 = lstm_step(link, c1[:2], h1[:2], x2)
    assert y.shape == (2, OUT)
    assert link.c.shape == (3, OUT) and link.h.shape == (3, OUT)
    tol = tolerances("float32")
    assert_allclose(y.array, h2, **tol)
    assert_allclose(link.h.array, numpy.concatenate([h2, h1[2:]]), **tol)
    assert_allclose(link.c.array, numpy.concatenate([c2, c1[2:]]), **tol)
    link(numpy.zeros((0, IN), numpy.float32))
    assert_allclose(link.h.array, numpy.concatenate([h2, h1[2:]]), **tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward_through_two_steps(dtype):
    link = _make(LSTM, dtype, IN, OUT)
    xs = _inputs(dtype, 2, batch=2)
    gy = numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype)

    params = (link.upward.W, link.upward.b, link.lateral.W)
    check_stateful_backward(link, tuple(xs), gy, dtype, params)


def test_backward_through_shrinking_batch():
    link = _make(LSTM, numpy.float64, IN, OUT)
    x1 = numpy.random.uniform(-1, 1, (3, IN))
    x2 = numpy.random.uniform(-1, 1, (2, IN))
    gh = numpy.random.uniform(-1, 1, (3, OUT))

    def two_steps(x1, x2):
        link.reset_state()
        link(x1)
        link(x2)
        return link.h

    params = (link.upward.W, link.upward.b, link.lateral.W)
    check_backward(two_steps, (x1, x2), gh, params=params, atol=1e-6, rtol=1e-5)


# -- the stateless LSTM -------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateless_against_reference(dtype):
    link = _make(StatelessLSTM, dtype, IN, OUT)
    x = _inputs(dtype, 1)[0]
    c = numpy.random.uniform(-1, 1, (4, OUT)).astype(dtype)
    h = numpy.random.uniform(-1, 1, (4, OUT)).astype(dtype)
    c_new, h_new = link(c, h, x)
    c_ref, h_ref = lstm_step(link, c.astype(numpy.float64), h.astype(numpy.float64), x)
    assert c_new.dtype == dtype and h_new.shape == (4, OUT)
    assert_allclose(c_new.array, c_ref, **tolerances(dtype))
    assert_allclose(h_new.array, h_ref, **tolerances(dtype))
    c_new, h_new = link(None, None, x)
    c_ref, h_ref = lstm_step(link, None, None, x)
    assert_allclose(h_new.array, h_ref, **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateless_backward(dtype):
    link = _make(StatelessLSTM, dtype, IN, OUT)
    c, h = (numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype) for _ in range(2))
    x = _inputs(dtype, 1, batch=2)[0]
    gc, gh = (numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype) for _ in range(2))
    params = (link.upward.W, link.upward.b, link.lateral.W)
    check_backward(
        link,
        (c, h, x),
        (gc, gh),
        params=params,
        dtype=numpy.float64,
        **tolerances(dtype, "backward"),
    )


# -- parameters, files, copies, bad input ------------------------------------------------
@pytest.mark.parametrize("cls", [LSTM, StatelessLSTM])
def test_param_names(cls):
    names = ["/lateral/W", "/upward/W", "/upward/b"]
    assert param_names(cls(IN, OUT)) == names
    assert param_names(cls(OUT)) == names
    assert persistent_names(cls(IN, OUT)) == []


def test_round_trip_into_lazy_link_and_copy():
    link = LSTM(IN, OUT, bias_init=initializers.Normal(1.0))
    fresh = check_link_lifecycle(link, LSTM(OUT), ["/lateral/W", "/upward/W", "/upward/b"])
    for x in _inputs(numpy.float32, 2):
        numpy.testing.assert_array_equal(fresh(x).array, link(x).array)


def test_copy_init_keeps_gate_initialization():
    link = LSTM(IN, OUT, upward_init=initializers.Normal(1.0), forget_bias_init=3.0)
    fresh = link.copy("init")
    numpy.testing.assert_array_equal(fresh.upward.b.array, numpy.array([0, 0, 3, 0] * OUT, "f"))
    assert not numpy.array_equal(fresh.upward.W.array, link.upward.W.array)


def _lstm_after_a_batch_of(batch):
    link = LSTM(IN, OUT)
    link(numpy.zeros((batch, IN), numpy.float32))
    return link


_LSTM = LSTM(IN, OUT)

test_bad_input = bad_input_test(
    [
        ((IN, 0), ValueError, "LSTM: out_size must be a positive int, got 0"),
        ((-1,), ValueError, "LSTM: out_size must be a positive int, got -1"),
        ((0, OUT), ValueError, "LSTM: in_size must be a positive int or None, got 0"),
        (
            StatelessLSTM,
            (IN, 2.5),
            {},
            ValueError,
            "StatelessLSTM: out_size must be a positive int",
        ),
        (
            _LSTM.set_state,
            (Variable(numpy.zeros((1, OUT), "f")), numpy.zeros((1, OUT), "f")),
            {},
            TypeError,
            "LSTM.set_state: expected h to be a Variable, got ndarray",
        ),
        (
            lambda: _lstm_after_a_batch_of(2)(numpy.zeros((3, IN), numpy.float32)),
            (),
            {},
            TypeError,
            ("LSTM: the batch size of x (3) must be equal to or less than ", " h (2)"),
        ),
        (
            _LSTM,
            (numpy.zeros((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("LinearFunction", "4 != 3"),
        ),
        (
            _LSTM,
            (numpy.zeros((2, IN), numpy.int32),),
            {},
            InvalidType,
            ("LinearFunction", "x.dtype.kind == 'f'"),
        ),
        (
            StatelessLSTM(IN, OUT),
            (numpy.zeros((2, OUT), numpy.float64), None, numpy.zeros((2, IN), numpy.float32)),
            {},
            InvalidType,
            ("LSTM", "x.dtype == c_prev.dtype", "float32 != float64"),
        ),
    ],
    function=LSTM,
)


# Chainer's weights for a seeded numpy.random, by fixtures/make_lstm_seeded_init.py.
SEEDED = os.path.join(os.path.dirname(__file__), "fixtures", "lstm_seeded_init.npz")


def _seeded_cases():
    return {
        "eager": lambda: LSTM(3, 4),
        "stateless": lambda: StatelessLSTM(3, 4),
        "bias": lambda: LSTM(
            3,
            2,
            bias_init=initializers.Normal(1.0),
            forget_bias_init=initializers.Uniform(1.0),
        ),
    }


@pytest.mark.parametrize("case", ["eager", "stateless", "bias"])
def test_seeded_weights_are_chainers(case):
    # Chainer draws gate block k of lateral.W, then of upward.W, for k = 0..3,
    # then the bias: the same seed must give the same model.
    numpy.random.seed(0)
    link = _seeded_cases()[case]()
    after = numpy.random.rand(3)
    with numpy.load(SEEDED) as chainer:
        numpy.testing.assert_array_equal(link.lateral.W.array, chainer[f"{case}/lateral/W"])
        numpy.testing.assert_array_equal(link.upward.W.array, chainer[f"{case}/upward/W"])
        numpy.testing.assert_array_equal(link.upward.b.array, chainer[f"{case}/upward/b"])
        numpy.testing.assert_array_equal(after, chainer[f"{case}/next"])


def test_seeded_lazy_weights_are_drawn_at_the_first_call_as_chainers():
    numpy.random.seed(0)
    link = LSTM(None, 4)
    lateral_before = link.lateral.W.array.copy()
    between = numpy.random.rand(2)
    link(numpy.ones((2, 3), numpy.float32))
    after = numpy.random.rand(3)
    with numpy.load(SEEDED) as chainer:
        numpy.testing.assert_array_equal(lateral_before, chainer["lazy/lateral/W_before"])
        numpy.testing.assert_array_equal(between, chainer["lazy/between"])
        numpy.testing.assert_array_equal(link.lateral.W.array, chainer["lazy/lateral/W"])
        numpy.testing.assert_array_equal(link.upward.W.array, chainer["lazy/upward/W"])
        numpy.testing.assert_array_equal(link.upward.b.array, chainer["lazy/upward/b"])
        numpy.testing.assert_array_equal(after, chainer["lazy/next"])


def test_copy_init_still_redraws_each_weight_by_gate_block():
    link = LSTM(3, 4, upward_init=initializers.Constant(2.0))
    link.upward.W.array[...] = 0
    fresh = link.copy("init")
    numpy.testing.assert_array_equal(fresh.upward.W.array, numpy.full((16, 3), 2, numpy.float32))
    assert not numpy.array_equal(fresh.lateral.W.array, link.lateral.W.array)
