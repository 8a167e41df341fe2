import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.relu6 import relu6

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def clear_of_kinks(shape, dtype):
    """Values below 0, inside (0, 6) or above 6, at least 0.1 from 0 and 6."""
    low = numpy.random.uniform(-1.0, -0.1, shape)
    mid = numpy.random.uniform(0.1, 5.9, shape)
    high = numpy.random.uniform(6.1, 7.0, shape)
    choice = numpy.random.randint(0, 3, shape)
    return numpy.asarray(numpy.choose(choice, [low, mid, high])).astype(dtype)


@testing.parameterize(*testing.product({"shape": [(3, 2), (), (2, 3, 4)], "dtype": FLOATS}))
class TestReLU6(FunctionTestCase):
    def generate_inputs(self):
        return (clear_of_kinks(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (relu6(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray(numpy.minimum(numpy.maximum(x, 0), 6)).astype(x.dtype),)


def test_caps_at_six_and_gradient_at_the_ends():
    x = Variable(numpy.array([-1.0, 0.0, 3.0, 6.0, 9.0]))
    y = relu6(x)
    numpy.testing.assert_array_equal(y.array, [0.0, 0.0, 3.0, 6.0, 6.0])
    y.grad = numpy.ones(5)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0.0, 0.0, 1.0, 0.0, 0.0])


def test_non_float_input():
    with pytest.raises(InvalidType) as e:
        relu6(numpy.zeros(3, numpy.int32))
    assert "ClippedReLU" in str(e.value) and "x.dtype.kind == 'f'" in str(e.value)
