import numpy
import pytest

from dbr.core import Variable, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.activation.rrelu import rrelu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def away_from_zero(shape, dtype, low=0.1, high=1.0):
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4)], "train": [True, False], "dtype": FLOATS})
)
class TestRReLU(FunctionTestCase):
    """Train mode with a fixed ``r`` (so that repeated evaluations agree), and test mode."""

    l, u = 0.1, 0.4

    def generate_inputs(self):
        self.r = numpy.asarray(numpy.random.uniform(self.l, self.u, self.shape))
        return (away_from_zero(self.shape, self.dtype),)

    def forward(self, inputs, device):
        x = inputs[0]
        r = device.send(self.r.astype(x.dtype))
        with using_config("train", self.train):
            return (rrelu(x, l=self.l, u=self.u, r=r),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        r = self.r if self.train else (self.l + self.u) / 2
        return (numpy.asarray(numpy.where(x >= 0, x, r * x)).astype(self.dtype),)


@pytest.fixture
def seeded():
    state = numpy.random.get_state()
    numpy.random.seed(0)
    yield
    numpy.random.set_state(state)


def test_random_slopes_are_uniform_in_l_u(seeded):
    l, u = 0.1, 0.4
    x = -numpy.ones((200, 500), numpy.float32)
    y, r = rrelu(x, l, u, return_r=True)
    assert r.shape == x.shape and r.dtype == numpy.float32
    assert numpy.float32(l) <= r.min() and r.max() <= numpy.float32(u)
    # mean (l + u) / 2 = 0.25, variance (u - l) ** 2 / 12 = 0.0075 over 1e5 samples.
    assert abs(r.mean() - 0.25) < 3e-3
    assert abs(r.var() - 0.0075) < 3e-4
    numpy.testing.assert_array_equal(y.array, -r)
    y2, r2 = rrelu(x, l, u, return_r=True)
    assert not numpy.array_equal(r, r2)


def test_given_r_is_reused_in_train_mode(seeded):
    x = Variable(numpy.array([-1.0, -2.0, 3.0], numpy.float32))
    _, r = rrelu(x, return_r=True)
    y, r_used = rrelu(x, r=r, return_r=True)
    assert r_used is r
    numpy.testing.assert_array_equal(y.array, numpy.where(x.array >= 0, x.array, r * x.array))
    y.grad = numpy.ones(3, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.array([r[0], r[1], 1.0], numpy.float32))


def test_test_mode_uses_the_mean_slope_and_ignores_r():
    x = numpy.array([-1.0, 2.0, -4.0], numpy.float64)
    with using_config("train", False):
        y, r = rrelu(x, l=0.2, u=0.6, r=numpy.zeros(3), return_r=True)
    numpy.testing.assert_array_equal(r, [0.4, 0.4, 0.4])
    testing.assert_allclose(y.array, [-0.4, 2.0, -1.6], atol=1e-15, rtol=0)


def test_default_bounds():
    with using_config("train", False):
        _, r = rrelu(numpy.zeros(2, numpy.float64), return_r=True)
    testing.assert_allclose(r, (1 / 8 + 1 / 3) / 2, atol=1e-15, rtol=0)


X = numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        ((X,), {"l": -0.1}, ValueError, "rrelu: expected l in [0, 1), got -0.1"),
        ((X,), {"u": 1.5}, ValueError, "rrelu: expected u in [0, 1), got 1.5"),
        ((X,), {"l": 0.3, "u": 0.2}, ValueError, "rrelu: expected l < u, got l=0.3, u=0.2"),
        ((X,), {"r": [0.1, 0.2, 0.3]}, TypeError, "rrelu: expected r to be None, numpy.ndarray"),
        ((X,), {"r": numpy.zeros(4, numpy.float32)}, InvalidType, ("RReLU", "r.shape == x.shape")),
        ((X,), {"r": numpy.zeros(3, numpy.float64)}, InvalidType, "r.dtype == x.dtype"),
        ((numpy.zeros(3, numpy.int32),), InvalidType, "x.dtype.kind == 'f'"),
    ],
    function=rrelu,
)
