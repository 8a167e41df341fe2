import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.elu import elu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def away_from_zero(shape, dtype, low=0.1, high=2.0):
    """Values with magnitude in [low, high) and a random sign (clear of the kink at 0)."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


def reference(x, alpha):
    x64 = x.astype(numpy.float64)
    y = numpy.where(x64 > 0, x64, alpha * numpy.expm1(numpy.minimum(x64, 0)))
    return numpy.asarray(y).astype(x.dtype)


@testing.parameterize(
    *testing.product(
        {"shape": [(3, 2), (), (2, 3, 4)], "alpha": [1.0, 0.5, 0.0, -0.5], "dtype": FLOATS}
    )
)
class TestELU(FunctionTestCase):
    def generate_inputs(self):
        return (away_from_zero(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (elu(inputs[0], alpha=self.alpha),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.alpha),)

    function = staticmethod(elu)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((numpy.zeros(3, numpy.int32),), InvalidType, ("ELU", "x.dtype.kind == 'f'")),
            ((x,), {"alpha": "1"}, TypeError, "elu: expected alpha to be a real number"),
        ]


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_inputs_do_not_overflow(dtype):
    x = numpy.array([-1e4, -50.0, 0.0, 50.0, 1e4]).astype(dtype)
    y = elu(x).array
    testing.assert_allclose(y, [-1.0, -1.0, 0.0, 50.0, 1e4], **testing.tolerances(dtype))


def test_gradients_of_both_branches():
    x = Variable(numpy.array([-2.0, -0.5, 0.0, 1.5]))
    y = elu(x, alpha=0.7)
    (gx,) = grad([y], [x], enable_double_backprop=True)
    expected = numpy.where(x.array > 0, 1.0, 0.7 * numpy.exp(x.array))
    testing.assert_allclose(gx, expected, atol=1e-15, rtol=1e-13)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(4))])
    expected2 = numpy.where(x.array > 0, 0.0, 0.7 * numpy.exp(x.array))
    testing.assert_allclose(ggx, expected2, atol=1e-15, rtol=1e-13)
