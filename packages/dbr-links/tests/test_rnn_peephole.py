import numpy
import pytest
from rnn_reference import lstm_gates, sigmoid

from dbr.core import InvalidType
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, make_link, tolerances
from dbr.core.testing.link_checks import check_link_lifecycle, check_stateful_backward
from dbr.links.rnn.peephole import StatefulPeepholeLSTM

IN, OUT = 3, 2


def _step(link, c, h, x):
    """NumPy reference of one peephole-LSTM step in float64."""

    def w(sub):
        return sub.W.array.astype(numpy.float64)

    a, i, f, o = lstm_gates(link, h, x)
    c = numpy.zeros_like(a) if c is None else c
    i = sigmoid(i + c @ w(link.peep_i).T)
    f = sigmoid(f + c @ w(link.peep_f).T)
    c = numpy.tanh(a) * i + f * c
    o = sigmoid(o + c @ w(link.peep_o).T)
    return c, o * numpy.tanh(c)


def _make(dtype, *args):
    link = make_link(StatefulPeepholeLSTM, dtype, *args)
    link.upward.b.array[...] = numpy.random.uniform(-1, 1, link.upward.b.shape)
    return link


def test_construction():
    link = StatefulPeepholeLSTM(IN, OUT)
    assert link.state_size == OUT and link.c is None and link.h is None
    assert link.upward.W.shape == (4 * OUT, IN) and link.upward.b.shape == (4 * OUT,)
    assert link.lateral.b is None
    for sub in (link.peep_i, link.peep_f, link.peep_o):
        assert sub.W.shape == (OUT, OUT) and sub.b is None
    link = StatefulPeepholeLSTM(in_size=None, out_size=OUT)
    assert link.upward.W.array is None
    link(numpy.zeros((1, 5), numpy.float32))
    assert link.upward.W.shape == (4 * OUT, 5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_steps_against_reference(dtype):
    link = _make(dtype, IN, OUT)
    xs = [numpy.random.uniform(-1, 1, (4, IN)).astype(dtype) for _ in range(3)]
    c = h = None
    for x in xs:
        y = link(x)
        c, h = _step(link, c, h, x)
        assert y.dtype == dtype and y.shape == (4, OUT)
        assert_allclose(y.array, h, **tolerances(dtype))
        assert_allclose(link.c.array, c, **tolerances(dtype))
    link.reset_state()
    assert link.c is None and link.h is None
    c = h = None
    for x in xs:
        c, h = _step(link, c, h, x)
        assert_allclose(link(x).array, h, **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward_through_two_steps(dtype):
    link = _make(dtype, IN, OUT)
    xs = tuple(numpy.random.uniform(-1, 1, (2, IN)).astype(dtype) for _ in range(2))
    gy = numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype)

    check_stateful_backward(link, xs, gy, dtype)


def test_names_round_trip_and_copy():
    link = _make(numpy.float32, IN, OUT)
    names = ["/lateral/W", "/peep_f/W", "/peep_i/W", "/peep_o/W", "/upward/W", "/upward/b"]
    x = numpy.random.uniform(-1, 1, (2, IN)).astype(numpy.float32)
    check_link_lifecycle(link, StatefulPeepholeLSTM(None, OUT), names, inputs=(x,))


def test_wrong_input():
    link = StatefulPeepholeLSTM(IN, OUT)
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)4 != 3"):
        link(numpy.zeros((2, 4), numpy.float32))
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)x.dtype.kind == 'f'"):
        link(numpy.zeros((2, IN), numpy.int32))
