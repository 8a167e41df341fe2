import numpy
import pytest

from dbr.core import Variable, backend, grad, testing
from dbr.core.testing import DEVICES, FunctionTestCase, get_test_device
from dbr.core.type_check import InvalidType
from dbr.functions.noise.gumbel_softmax import gumbel_softmax

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
NOISE_SEED = 12345


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


def seeded_gumbel_noise(device, shape, dtype):
    """The noise gumbel_softmax draws on ``device`` after seeding with NOISE_SEED, as float64."""
    device.xp.random.seed(NOISE_SEED)
    g = device.xp.random.gumbel(size=shape).astype(dtype)
    return backend.to_cpu(g).astype(numpy.float64)


def softmax_ref(z, axis):
    z = z - z.max(axis=axis, keepdims=True)
    e = numpy.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


@testing.parameterize(
    *testing.product(
        {
            "shape, axis": [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((5,), 0)],
            "tau": [0.5, 1.0],
            "dtype": FLOATS,
        }
    )
)
class TestGumbelSoftmaxWithSeededNoise(FunctionTestCase):
    """Values and gradients, reseeding before each call so that every call draws the same noise."""

    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-1, 1, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        device.xp.random.seed(NOISE_SEED)
        return (gumbel_softmax(inputs[0], tau=self.tau, axis=self.axis),)

    def forward_expected(self, inputs):
        g = seeded_gumbel_noise(self.test_device, self.shape, self.dtype)
        y = softmax_ref((inputs[0].astype(numpy.float64) + g) / self.tau, self.axis)
        return (y.astype(self.dtype),)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestGumbelSoftmaxLearnedTemperature(FunctionTestCase):
    """A Variable temperature receives a gradient too."""

    def generate_inputs(self):
        log_pi = numpy.random.uniform(-1, 1, (3, 4)).astype(self.dtype)
        return log_pi, numpy.asarray(numpy.random.uniform(0.5, 1.5)).astype(self.dtype)

    def forward(self, inputs, device):
        device.xp.random.seed(NOISE_SEED)
        return (gumbel_softmax(inputs[0], tau=inputs[1]),)

    def forward_expected(self, inputs):
        log_pi, tau = (a.astype(numpy.float64) for a in inputs)
        g = seeded_gumbel_noise(self.test_device, log_pi.shape, self.dtype)
        return (softmax_ref((log_pi + g) / tau, 1).astype(self.dtype),)


@pytest.mark.parametrize("device_spec", DEVICES)
def test_seeded_noise_does_not_depend_on_the_dtype(device_spec):
    # The numerical gradient evaluates a float64 copy of log_pi: after the same seed it
    # must meet the noise that log_pi's own dtype gets (cupy.random's float32 draws differ).
    device = get_test_device(device_spec)
    samples = []
    for dtype in FLOATS:
        device.xp.random.seed(NOISE_SEED)
        with device:
            y = gumbel_softmax(device.xp.zeros((3, 4), dtype), tau=1.0)
        samples.append(backend.to_cpu(y.array).astype(numpy.float64))
    testing.assert_allclose(samples[0], samples[2], atol=2e-3, rtol=1e-2)
    testing.assert_allclose(samples[1], samples[2], atol=1e-6, rtol=1e-5)


def test_samples_follow_the_categorical_distribution():
    # Gumbel-max: argmax(log_pi + g) is distributed as pi; a small tau makes y nearly one-hot.
    numpy.random.seed(0)
    pi = numpy.array([0.1, 0.2, 0.3, 0.4])
    n = 40_000
    log_pi = numpy.tile(numpy.log(pi), (n, 1))
    y = gumbel_softmax(log_pi, tau=0.1).array
    testing.assert_allclose(y.sum(axis=1), numpy.ones(n), atol=1e-12, rtol=0)
    frequency = numpy.bincount(y.argmax(axis=1), minlength=4) / n
    assert numpy.all(numpy.abs(frequency - pi) <= 5 * numpy.sqrt(pi * (1 - pi) / n))
    assert numpy.mean(y.max(axis=1) > 0.9) > 0.8


def test_unnormalised_log_pi_gives_the_same_distribution():
    log_pi = numpy.log(numpy.array([[1.0, 3.0]]))
    numpy.random.seed(5)
    y1 = gumbel_softmax(log_pi, tau=0.3).array
    numpy.random.seed(5)
    y2 = gumbel_softmax(log_pi + 10.0, tau=0.3).array
    testing.assert_allclose(y1, y2, atol=1e-12, rtol=1e-10)


def test_default_axis_is_1_and_default_tau_is_small():
    numpy.random.seed(2)
    y = gumbel_softmax(numpy.zeros((2, 3, 4), numpy.float32))
    assert y.shape == (2, 3, 4) and y.dtype == numpy.float32
    testing.assert_allclose(y.array.sum(axis=1), numpy.ones((2, 4)), atol=1e-6, rtol=0)


def test_gradient_reaches_log_pi():
    log_pi = Variable(numpy.random.uniform(-1, 1, (2, 3)))
    y = gumbel_softmax(log_pi, tau=0.7)
    (g,) = grad([y[:, 0]], [log_pi], [Variable(numpy.ones(2))])
    assert g.shape == (2, 3) and numpy.all(numpy.isfinite(g.array))
    # the softmax Jacobian rows sum to zero
    testing.assert_allclose(g.array.sum(axis=1), numpy.zeros(2), atol=1e-12, rtol=0)


def test_zero_dimensional_input_gives_ones():
    y = gumbel_softmax(numpy.array(0.3, numpy.float32))
    assert isinstance(y, Variable)
    assert y.shape == () and y.dtype == numpy.float32 and float(y.array) == 1.0


@pytest.mark.parametrize("tau", [0.0, -1.0])
def test_non_positive_temperature(tau):
    with pytest.raises(ValueError, match="gumbel_softmax: expected tau > 0, got"):
        gumbel_softmax(numpy.zeros((2, 3), numpy.float32), tau=tau)


def test_integer_log_pi():
    with pytest.raises(InvalidType) as e:
        gumbel_softmax(numpy.zeros((2, 3), numpy.int32))
    assert "gumbel_softmax" in str(e.value) and "log_pi.dtype.kind" in str(e.value)


def test_axis_out_of_range():
    with pytest.raises(InvalidType):
        gumbel_softmax(numpy.zeros((2, 3), numpy.float32), axis=2)
