import numpy
import pytest
from rnn_reference import linear, sigmoid

from dbr.core import InvalidType, Variable, testing
from dbr.core.testing import FLOAT_DTYPES, LinkTestCase, assert_allclose, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_link_lifecycle,
    check_stateful_backward,
    check_stateful_steps,
)
from dbr.links.rnn.mgu import StatefulMGU, StatelessMGU

IN, OUT = 3, 2


def _step(link, h, x):
    """NumPy reference of one MGU step in float64 (h None means zeros)."""

    x = x.astype(numpy.float64)
    h = numpy.zeros((len(x), OUT)) if h is None else h.astype(numpy.float64)
    f = sigmoid(linear(link.W_f, numpy.concatenate([h, x], axis=1)))
    h_bar = numpy.tanh(linear(link.W_h, numpy.concatenate([f * h, x], axis=1)))
    return f * h_bar + (1 - f) * h


def _make(cls, dtype, *args, **kwargs):
    link = make_link(cls, dtype, *args, **kwargs)
    for sub in (link.W_f, link.W_h):
        sub.b.array[...] = numpy.random.uniform(-1, 1, sub.b.shape)
    return link


def _inputs(dtype, n=3, batch=4):
    return [numpy.random.uniform(-1, 1, (batch, IN)).astype(dtype) for _ in range(n)]


def test_construction():
    for link in (
        StatelessMGU(IN, OUT),
        StatelessMGU(n_inputs=IN, n_units=OUT),
        StatefulMGU(IN, OUT),
        StatefulMGU(in_size=IN, out_size=OUT),
    ):
        assert link.W_f.W.shape == (OUT, IN + OUT) and link.W_h.W.shape == (OUT, IN + OUT)
        assert link.W_f.b.shape == (OUT,) and link.W_h.b.shape == (OUT,)


@testing.parameterize(*testing.product({"dtype": FLOAT_DTYPES}))
class TestStatelessMGU(LinkTestCase):
    """One step ``link(h, x)`` against the float64 reference, and its gradients."""

    def create_link(self):
        return _make(StatelessMGU, self.dtype, IN, OUT)

    def generate_inputs(self):
        h = numpy.random.uniform(-1, 1, (4, OUT)).astype(self.dtype)
        return h, _inputs(self.dtype, 1)[0]

    def forward_expected(self, link, inputs):
        return (_step(link, *inputs).astype(self.dtype),)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateful_steps_reset_and_set_state(dtype):
    link = _make(StatefulMGU, dtype, IN, OUT)
    xs = _inputs(dtype)
    check_stateful_steps(link, xs, _step, dtype)
    h0 = numpy.random.uniform(-1, 1, (4, OUT)).astype(dtype)
    link.set_state(Variable(h0))
    assert_allclose(link(xs[0]).array, _step(link, h0, xs[0]), **tolerances(dtype))


def test_set_state_needs_a_variable():
    with pytest.raises(TypeError, match=r"StatefulMGU.set_state: expected h to be a Variable"):
        StatefulMGU(IN, OUT).set_state(numpy.zeros((1, OUT), numpy.float32))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateful_backward_through_two_steps(dtype):
    link = _make(StatefulMGU, dtype, IN, OUT)
    xs = tuple(_inputs(dtype, 2, 2))
    gy = numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype)

    check_stateful_backward(link, xs, gy, dtype)


@pytest.mark.parametrize("cls", [StatelessMGU, StatefulMGU])
def test_param_names_round_trip_copy(cls):
    link = _make(cls, numpy.float32, IN, OUT)
    check_link_lifecycle(link, cls(IN, OUT), ["/W_f/W", "/W_f/b", "/W_h/W", "/W_h/b"])


def test_wrong_input():
    link = StatefulMGU(IN, OUT)
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)6 != 5"):
        link(numpy.zeros((2, 4), numpy.float32))
    with pytest.raises(InvalidType, match=r"Concat(?s:.*)xs\[1\].dtype == xs\[0\].dtype"):
        StatelessMGU(IN, OUT)(numpy.zeros((2, OUT), numpy.float32), numpy.zeros((2, IN)))
