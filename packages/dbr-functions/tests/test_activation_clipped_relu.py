import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.clipped_relu import clipped_relu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def clear_of_kinks(shape, dtype, z):
    """Values below 0, inside (0, z) or above z, at least 0.1 from 0 and z."""
    low = numpy.random.uniform(-1.0, -0.1, shape)
    mid = numpy.random.uniform(0.1, z - 0.1, shape)
    high = numpy.random.uniform(z + 0.1, z + 1.0, shape)
    choice = numpy.random.randint(0, 3, shape)
    return numpy.asarray(numpy.choose(choice, [low, mid, high])).astype(dtype)


def reference(x, z):
    return numpy.asarray(numpy.minimum(numpy.maximum(x.astype(numpy.float64), 0), z)).astype(
        x.dtype
    )


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4)], "z": [20.0, 1.0], "dtype": FLOATS})
)
class TestClippedReLU(FunctionTestCase):
    def generate_inputs(self):
        return (clear_of_kinks(self.shape, self.dtype, self.z),)

    def forward(self, inputs, device):
        return (clipped_relu(inputs[0], self.z),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.z),)

    function = staticmethod(clipped_relu)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((numpy.zeros(3, numpy.int32),), InvalidType, ("ClippedReLU", "x.dtype.kind == 'f'")),
            ((x, -1.0), ValueError, "clipped_relu: expected z > 0, got -1.0"),
            ((x, None), TypeError, "clipped_relu: expected z to be a real number, got None"),
        ]


def test_default_cap_and_gradient_at_the_ends():
    x = Variable(numpy.array([-1.0, 0.0, 0.5, 20.0, 25.0], numpy.float32))
    y = clipped_relu(x)
    numpy.testing.assert_array_equal(y.array, [0.0, 0.0, 0.5, 20.0, 20.0])
    y.grad = numpy.ones(5, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0.0, 0.0, 1.0, 0.0, 0.0])


def test_integer_cap_is_accepted():
    numpy.testing.assert_array_equal(clipped_relu(numpy.array([3.0]), 2).array, [2.0])
