import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.leaky_relu import leaky_relu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def away_from_zero(shape, dtype, low=0.1, high=1.0):
    """Values with magnitude in [low, high) and a random sign (clear of the kink)."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(
    *testing.product(
        {"shape": [(3, 2), (), (2, 3, 4)], "slope": [0.2, 0.0, -0.3, 1.5], "dtype": FLOATS}
    )
)
class TestLeakyReLU(FunctionTestCase):
    def generate_inputs(self):
        return (away_from_zero(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (leaky_relu(inputs[0], slope=self.slope),)

    def forward_expected(self, inputs):
        x = inputs[0]
        x64 = x.astype(numpy.float64)
        return (numpy.asarray(numpy.where(x64 >= 0, x64, self.slope * x64)).astype(x.dtype),)

    function = staticmethod(leaky_relu)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((x.astype(numpy.int32),), InvalidType, ("LeakyReLU", "x.dtype.kind == 'f'")),
            (
                (x,),
                {"slope": "a"},
                TypeError,
                "leaky_relu: expected slope to be a real number, got 'a'",
            ),
        ]


def test_default_slope_and_gradient_at_zero():
    x = Variable(numpy.array([-1.0, 0.0, 2.0], numpy.float32))
    y = leaky_relu(x)
    numpy.testing.assert_allclose(y.array, [-0.2, 0.0, 2.0], rtol=1e-7)
    y.grad = numpy.ones(3, numpy.float32)
    y.backward()
    # Where x == 0 the function is taken as the identity branch.
    numpy.testing.assert_array_equal(x.grad, numpy.array([0.2, 1.0, 1.0], numpy.float32))


def test_zero_slope_blocks_the_negative_gradient():
    x = Variable(numpy.array([-1.0, 3.0]))
    y = leaky_relu(x, slope=0.0)
    y.grad = numpy.ones(2)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0.0, 1.0])
