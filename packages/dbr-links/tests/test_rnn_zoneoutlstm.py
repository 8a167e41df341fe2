import numpy
import pytest
from rnn_reference import lstm_step

from dbr.core import InvalidType, Variable, using_config
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import check_link_lifecycle, check_stateful_backward
from dbr.links.rnn.zoneoutlstm import StatefulZoneoutLSTM

IN, OUT = 3, 2


def _make(dtype, *args, **kwargs):
    link = make_link(StatefulZoneoutLSTM, dtype, *args, **kwargs)
    link.upward.b.array[...] = numpy.random.uniform(-1, 1, link.upward.b.shape)
    return link


def _inputs(dtype, n=3, batch=4):
    return [numpy.random.uniform(-1, 1, (batch, IN)).astype(dtype) for _ in range(n)]


def test_construction():
    link = StatefulZoneoutLSTM(IN, OUT)
    assert (link.c_ratio, link.h_ratio, link.state_size) == (0.5, 0.5, OUT)
    assert link.c is None and link.h is None
    assert link.upward.W.shape == (4 * OUT, IN) and link.lateral.W.shape == (4 * OUT, OUT)
    assert link.lateral.b is None
    link = StatefulZoneoutLSTM(in_size=None, out_size=OUT, c_ratio=0.1, h_ratio=0.2)
    assert (link.c_ratio, link.h_ratio) == (0.1, 0.2)
    assert link.upward.W.array is None
    link(numpy.zeros((1, 5), numpy.float32))
    assert link.upward.W.shape == (4 * OUT, 5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_test_mode_is_a_plain_lstm(dtype):
    link = _make(dtype, IN, OUT)
    c = h = None
    with using_config("train", False):
        for x in _inputs(dtype):
            y = link(x)
            c, h = lstm_step(link, c, h, x)
            assert y.dtype == dtype
            assert_allclose(y.array, h, **tolerances(dtype))
            assert_allclose(link.c.array, c, **tolerances(dtype))


@pytest.mark.parametrize("ratio", [0.0, 1.0])
def test_train_mode_extreme_ratios(ratio):
    link = _make(numpy.float64, IN, OUT, c_ratio=ratio, h_ratio=ratio)
    c = h = numpy.zeros((4, OUT))
    for x in _inputs(numpy.float64):
        y = link(x)
        c_new, h_new = lstm_step(link, c, h, x)
        c, h = (c_new, h_new) if ratio == 0.0 else (c, h)
        assert_allclose(y.array, h, atol=1e-12, rtol=1e-12)
        assert_allclose(link.c.array, c, atol=1e-12, rtol=1e-12)


def test_train_mode_mixes_old_and_new():
    numpy.random.seed(1)
    link = _make(numpy.float64, IN, OUT, c_ratio=0.5, h_ratio=0.5)
    c0 = numpy.random.uniform(-1, 1, (50, OUT))
    h0 = numpy.random.uniform(-1, 1, (50, OUT))
    link.set_state(Variable(c0), Variable(h0))
    x = numpy.random.uniform(-1, 1, (50, IN))
    y = link(x).array
    c_new, h_new = lstm_step(link, c0, h0, x)
    kept = numpy.isclose(y, h0)
    assert numpy.all(kept | numpy.isclose(y, h_new))
    assert 0.25 < kept.mean() < 0.75
    kept_c = numpy.isclose(link.c.array, c0)
    assert numpy.all(kept_c | numpy.isclose(link.c.array, c_new))


def test_reset_and_set_state():
    link = _make(numpy.float32, IN, OUT)
    xs = _inputs(numpy.float32)
    with using_config("train", False):
        first = [link(x).array for x in xs]
        link.reset_state()
        assert link.c is None and link.h is None
        for x, y in zip(xs, first):
            numpy.testing.assert_array_equal(link(x).array, y)
        c = numpy.random.uniform(-1, 1, (4, OUT)).astype(numpy.float32)
        h = numpy.random.uniform(-1, 1, (4, OUT)).astype(numpy.float32)
        link.set_state(Variable(c), Variable(h))
        y = link(xs[0])
    assert_allclose(y.array, lstm_step(link, c, h, xs[0])[1], **tolerances("float32"))
    with pytest.raises(TypeError, match=r"set_state: expected c to be a Variable, got ndarray"):
        link.set_state(c, Variable(h))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward_through_two_steps(dtype):
    link = _make(dtype, IN, OUT)
    xs = tuple(_inputs(dtype, 2, batch=2))
    gy = numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype)

    with using_config("train", False):
        check_stateful_backward(link, xs, gy, dtype)


def test_param_names_round_trip_copy():
    link = _make(numpy.float32, IN, OUT)
    names = ["/lateral/W", "/upward/W", "/upward/b"]
    check_link_lifecycle(link, StatefulZoneoutLSTM(None, OUT), names)


test_bad_input = bad_input_test(
    [
        ((IN, OUT), {"train": True}, ValueError, "StatefulZoneoutLSTM: the train argument"),
        ((IN, OUT), {"foo": 1}, TypeError, "StatefulZoneoutLSTM: got unexpected keyword"),
        (
            (IN, OUT),
            {"h_ratio": 2},
            ValueError,
            "StatefulZoneoutLSTM: h_ratio must be in [0, 1], got 2",
        ),
        (
            StatefulZoneoutLSTM(IN, OUT),
            (numpy.zeros((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("LinearFunction", "4 != 3"),
        ),
    ],
    function=StatefulZoneoutLSTM,
)
