import numpy
import pytest

from dbr.core import Variable, backend, grad, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.noise.zoneout import zoneout

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
NOISE_SEED = 4321


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


@testing.parameterize(
    *testing.product({"shape": [(3, 4), ()], "ratio": [0.0, 0.3, 1.0], "dtype": FLOATS})
)
class TestZoneoutWithSeededFlags(FunctionTestCase):
    """Values and gradients, reseeding before each call so that every call draws the same flags."""

    def generate_inputs(self):
        h, x = (numpy.random.uniform(-1, 1, self.shape) for _ in range(2))
        return numpy.asarray(h).astype(self.dtype), numpy.asarray(x).astype(self.dtype)

    def forward(self, inputs, device):
        device.xp.random.seed(NOISE_SEED)
        return (zoneout(*inputs, ratio=self.ratio),)

    def forward_expected(self, inputs):
        h, x = inputs
        xp = self.test_device.xp
        xp.random.seed(NOISE_SEED)
        if xp is numpy:
            u = numpy.random.random_sample(self.shape)
        else:  # cupy.random draws the flags' uniforms in float32
            u = backend.to_cpu(xp.random.random_sample(self.shape, dtype=numpy.float32))
        take_x = u >= self.ratio
        return (numpy.asarray(numpy.where(take_x, x, h)),)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.8])
def test_previous_state_is_kept_with_probability_ratio(ratio, dtype):
    numpy.random.seed(0)
    n = 200_000
    y = zoneout(numpy.zeros(n, dtype), numpy.ones(n, dtype), ratio).array
    assert y.dtype == dtype
    assert set(numpy.unique(y).tolist()) <= {0.0, 1.0}
    kept_h = float(numpy.mean(y == 0))
    assert abs(kept_h - ratio) <= 5 * (ratio * (1 - ratio) / n) ** 0.5


def test_test_mode_returns_x():
    h = numpy.zeros((2, 3), numpy.float32)
    x = numpy.ones((2, 3), numpy.float32)
    with using_config("train", False):
        y = zoneout(h, x, 0.9)
    assert isinstance(y, Variable)
    numpy.testing.assert_array_equal(y.array, x)


def test_gradients_follow_the_flags_drawn_in_forward():
    h = Variable(numpy.full((6, 5), -1.0))
    x = Variable(numpy.full((6, 5), 1.0))
    y = zoneout(h, x, 0.5)
    from_x = (y.array == 1.0).astype(numpy.float64)
    gy = Variable(numpy.random.uniform(-1, 1, (6, 5)))
    gh, gx = grad([y], [h, x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, gy.array * from_x)
    numpy.testing.assert_array_equal(gh.array, gy.array * (1 - from_x))
    (ggy,) = grad([gx], [gy], [Variable(numpy.ones((6, 5)))])
    numpy.testing.assert_array_equal(ggy.array, from_x)


def test_flags_of_the_node_say_where_each_input_was_taken():
    h = numpy.full((6, 5), -1.0, numpy.float32)
    x = numpy.full((6, 5), 1.0, numpy.float32)
    y = zoneout(h, x, 0.5)
    node = y.creator
    assert node.flag_x.dtype == bool and node.flag_h.dtype == bool
    numpy.testing.assert_array_equal(node.flag_x, y.array == 1.0)
    numpy.testing.assert_array_equal(node.flag_h, y.array == -1.0)
    numpy.testing.assert_array_equal(h * node.flag_h + x * node.flag_x, y.array)


def test_flag_h_is_none_before_forward():
    from dbr.functions.noise.zoneout import Zoneout

    assert Zoneout(0.5).flag_h is None


_Z3 = numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        ((_Z3, _Z3, -0.1), ValueError, "zoneout: expected ratio in [0, 1], got"),
        ((_Z3, _Z3, 1.1), ValueError, "zoneout: expected ratio in [0, 1], got"),
        ((_Z3, numpy.zeros(4, numpy.float32)), InvalidType, ("Zoneout", "h.shape", "x.shape")),
        ((_Z3, numpy.zeros(3)), InvalidType, ("Zoneout", "h.dtype", "x.dtype")),
        (
            (numpy.zeros(3, numpy.int32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            ("Zoneout", "h.dtype.kind"),
        ),
    ],
    function=zoneout,
)


def test_flags_come_from_one_call_of_numpy_random_rand(monkeypatch):
    # Chainer draws numpy.random.rand(*x.shape), the call its tests mock.
    calls = []
    u = numpy.array([[0.1, 0.9], [0.6, 0.3]])

    def rand(*shape):
        calls.append(shape)
        return u

    monkeypatch.setattr(numpy.random, "rand", rand)
    h = numpy.zeros((2, 2), numpy.float32)
    x = numpy.ones((2, 2), numpy.float32)
    y = zoneout(h, x, 0.5)
    assert calls == [(2, 2)]
    testing.assert_allclose(y.array, [[0, 1], [1, 0]], atol=0, rtol=0)
