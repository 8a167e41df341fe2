import numpy
import pytest

from dbr.core import Variable, grad, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.noise.gaussian import gaussian

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


@testing.parameterize(*testing.product({"shape": [(3, 4), ()], "dtype": FLOATS}))
class TestGaussianWithEps(FunctionTestCase):
    """Values and gradients with the noise fixed, so that every call draws the same sample."""

    def before_test(self, test_name):
        self.eps = numpy.asarray(numpy.random.standard_normal(self.shape)).astype(self.dtype)

    def generate_inputs(self):
        mean = numpy.random.uniform(-1, 1, self.shape)
        ln_var = numpy.random.uniform(-1, 1, self.shape)
        return tuple(numpy.asarray(a).astype(self.dtype) for a in (mean, ln_var))

    def forward(self, inputs, device):
        mean, ln_var = inputs
        return (gaussian(mean, ln_var, eps=device.send(self.eps)),)

    def forward_expected(self, inputs):
        mean, ln_var = (a.astype(numpy.float64) for a in inputs)
        y = mean + numpy.exp(ln_var / 2) * self.eps.astype(numpy.float64)
        return (numpy.asarray(y).astype(self.dtype),)


@pytest.mark.parametrize("dtype", FLOATS)
def test_samples_have_the_requested_mean_and_variance(dtype):
    numpy.random.seed(0)
    n = 200_000
    mu, sigma = 1.5, 0.7
    mean = numpy.full(n, mu, dtype)
    ln_var = numpy.full(n, 2 * numpy.log(sigma), dtype)
    y = gaussian(mean, ln_var).array.astype(numpy.float64)
    assert gaussian(mean, ln_var).dtype == dtype
    # 5 standard errors of the sample mean and of the sample variance, plus float16 rounding
    rounding = 2e-3 if dtype == numpy.float16 else 0.0
    assert abs(y.mean() - mu) <= 5 * sigma / n**0.5 + rounding
    assert abs(y.var() - sigma**2) <= 5 * sigma**2 * (2.0 / n) ** 0.5 + rounding


def test_returned_eps_repeats_the_sample_and_is_standard_normal():
    mean = numpy.random.uniform(-1, 1, (50, 40)).astype(numpy.float32)
    ln_var = numpy.random.uniform(-1, 1, (50, 40)).astype(numpy.float32)
    y1, eps = gaussian(mean, ln_var, return_eps=True)
    assert eps.shape == mean.shape and eps.dtype == numpy.float32
    assert abs(eps.mean()) < 5 / 2000**0.5 and abs(eps.var() - 1) < 5 * (2 / 2000) ** 0.5
    y2, eps2 = gaussian(mean, ln_var, eps=eps, return_eps=True)
    assert eps2 is eps
    numpy.testing.assert_array_equal(y1.array, y2.array)
    expected = mean + numpy.exp(ln_var * numpy.float32(0.5)) * eps
    testing.assert_allclose(y1, expected)


def test_numpy_seed_reproduces_the_sample():
    mean = numpy.zeros(6)
    ln_var = numpy.zeros(6)
    numpy.random.seed(3)
    y1 = gaussian(mean, ln_var).array
    numpy.random.seed(3)
    y2 = gaussian(mean, ln_var).array
    numpy.testing.assert_array_equal(y1, y2)


def test_it_samples_in_test_mode_too():
    mean = numpy.zeros(100)
    ln_var = numpy.zeros(100)
    with using_config("train", False):
        y1 = gaussian(mean, ln_var).array
        y2 = gaussian(mean, ln_var).array
    assert not numpy.array_equal(y1, y2)


def test_gradients_use_the_eps_drawn_in_forward():
    mean = Variable(numpy.random.uniform(-1, 1, (4, 3)))
    ln_var = Variable(numpy.random.uniform(-1, 1, (4, 3)))
    y, eps = gaussian(mean, ln_var, return_eps=True)
    gy = numpy.random.uniform(-1, 1, (4, 3))
    g_mean, g_ln_var = grad([y], [mean, ln_var], [Variable(gy)])
    numpy.testing.assert_array_equal(g_mean.array, gy)
    testing.assert_allclose(g_ln_var, gy * 0.5 * numpy.exp(ln_var.array / 2) * eps, rtol=1e-12)


_Z3 = numpy.zeros(3)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros(3, numpy.int32), numpy.zeros(3, numpy.int32)),
            {"eps": None},
            InvalidType,
            ("Gaussian", "mean.dtype.kind"),
        ),
        (
            (numpy.zeros(3, numpy.float32), _Z3),
            {"eps": None},
            InvalidType,
            ("Gaussian", "mean.dtype", "ln_var.dtype"),
        ),
        (
            (_Z3, numpy.zeros(4)),
            {"eps": None},
            InvalidType,
            ("Gaussian", "mean.shape", "ln_var.shape"),
        ),
        ((_Z3, _Z3), {"eps": numpy.zeros(4)}, InvalidType, ("Gaussian", "eps.shape")),
        (
            (_Z3, _Z3),
            {"eps": numpy.zeros(3, numpy.float32)},
            InvalidType,
            ("Gaussian", "eps.dtype"),
        ),
    ],
    function=gaussian,
)
