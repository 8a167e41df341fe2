import numpy
import pytest
from rnn_reference import linear, sigmoid

from dbr.core import InvalidType, Variable, initializers, testing
from dbr.core.testing import FLOAT_DTYPES, LinkTestCase, assert_allclose, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_link_lifecycle,
    check_stateful_backward,
    check_stateful_steps,
)
from dbr.links.rnn.gru import GRU, StatefulGRU, StatelessGRU

IN, OUT = 3, 2
NAMES = [
    "/U/W",
    "/U/b",
    "/U_r/W",
    "/U_r/b",
    "/U_z/W",
    "/U_z/b",
    "/W/W",
    "/W/b",
    "/W_r/W",
    "/W_r/b",
    "/W_z/W",
    "/W_z/b",
]


def _step(link, h, x):
    """NumPy reference of one GRU step in float64 (h None means zeros)."""

    if h is None:  # r is multiplied by zeros: W_r and U_r do not matter
        return sigmoid(linear(link.W_z, x)) * numpy.tanh(linear(link.W, x))
    h = h.astype(numpy.float64)
    r = sigmoid(linear(link.W_r, x) + linear(link.U_r, h))
    z = sigmoid(linear(link.W_z, x) + linear(link.U_z, h))
    h_bar = numpy.tanh(linear(link.W, x) + linear(link.U, r * h))
    return z * h_bar + (1 - z) * h


def _make(cls, dtype, *args, **kwargs):
    kwargs.setdefault("bias_init", initializers.Normal(0.5))
    return make_link(cls, dtype, *args, **kwargs)


def _inputs(dtype, n=3, batch=4):
    return [numpy.random.uniform(-1, 1, (batch, IN)).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("cls", [StatelessGRU, StatefulGRU, GRU])
def test_construction(cls):
    link = cls(IN, OUT)
    for name in ("W_r", "W_z", "W"):
        assert getattr(link, name).W.shape == (OUT, IN)
    for name in ("U_r", "U_z", "U"):
        assert getattr(link, name).W.shape == (OUT, OUT)
    numpy.testing.assert_array_equal(link.W.b.array, numpy.zeros(OUT, "f"))
    link = cls(in_size=IN, out_size=OUT, init=1.0, inner_init=2.0, bias_init=3.0)
    numpy.testing.assert_array_equal(link.W_z.W.array, numpy.ones((OUT, IN), "f"))
    numpy.testing.assert_array_equal(link.U.W.array, numpy.full((OUT, OUT), 2, "f"))
    numpy.testing.assert_array_equal(link.U_r.b.array, numpy.full(OUT, 3, "f"))
    link = cls(None, OUT)
    assert link.W.W.array is None and link.U.W.shape == (OUT, OUT)


def test_alias_and_stateful_defaults():
    assert issubclass(GRU, StatefulGRU)
    link = GRU(IN, OUT)
    assert link.h is None and link.state_size == OUT


@testing.parameterize(*testing.product({"dtype": FLOAT_DTYPES}))
class TestStatelessGRU(LinkTestCase):
    """One step ``link(h, x)`` against the float64 reference, and its gradients."""

    def create_link(self):
        return _make(StatelessGRU, self.dtype, IN, OUT)

    def generate_inputs(self):
        h = numpy.random.uniform(-1, 1, (4, OUT)).astype(self.dtype)
        return h, _inputs(self.dtype, 1)[0]

    def forward_expected(self, link, inputs):
        return (_step(link, *inputs).astype(self.dtype),)


@pytest.mark.parametrize("cls", [StatefulGRU, GRU])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateful_steps_against_reference(cls, dtype):
    link = _make(cls, dtype, IN, OUT)
    xs = _inputs(dtype)
    check_stateful_steps(link, xs, _step, dtype)


def test_lazy_in_size():
    link = StatefulGRU(None, OUT)
    x = numpy.random.uniform(-1, 1, (4, 5)).astype(numpy.float32)
    link(x)
    assert link.W_z.W.shape == (OUT, 5) and link.W.W.shape == (OUT, 5)
    assert link.W_r.W.array is None  # as in Chainer, the first step does not use W_r
    link(x)
    assert link.W_r.W.shape == (OUT, 5)


def test_set_state():
    link = _make(StatefulGRU, numpy.float32, IN, OUT)
    h = numpy.random.uniform(-1, 1, (4, OUT)).astype(numpy.float32)
    link.set_state(Variable(h))
    x = _inputs(numpy.float32, 1)[0]
    assert_allclose(link(x).array, _step(link, h, x), **tolerances("float32"))
    with pytest.raises(TypeError, match=r"StatefulGRU.set_state: expected h to be a Variable"):
        link.set_state(h)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_stateful_backward_through_two_steps(dtype):
    link = _make(StatefulGRU, dtype, IN, OUT)
    xs = tuple(_inputs(dtype, 2, 2))
    gy = numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype)

    check_stateful_backward(link, xs, gy, dtype)


def test_gru_takes_one_argument():
    link = GRU(IN, OUT)
    x = numpy.zeros((1, IN), numpy.float32)
    with pytest.raises(
        ValueError, match=r"GRU.forward: expected 1 argument \(x\), got 2; .*StatelessGRU"
    ):
        link(numpy.zeros((1, OUT), numpy.float32), x)
    with pytest.raises(ValueError, match=r"GRU.forward: expected 1 argument \(x\), got 0"):
        link()


@pytest.mark.parametrize("cls", [StatelessGRU, StatefulGRU, GRU])
def test_param_names_round_trip_copy(cls):
    link = cls(IN, OUT, bias_init=initializers.Normal(1.0))
    check_link_lifecycle(link, cls(None, OUT), NAMES)


def test_wrong_input():
    link = StatefulGRU(IN, OUT)
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)4 != 3"):
        link(numpy.zeros((2, 4), numpy.float32))
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)x.dtype.kind == 'f'"):
        link(numpy.zeros((2, IN), numpy.int32))
