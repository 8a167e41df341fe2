import numpy
import pytest

from dbr.core import Variable, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.sigmoid import sigmoid

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x):
    """The logistic function in float64, written without overflow for either sign."""
    x64 = x.astype(numpy.float64)
    e = numpy.exp(-numpy.abs(x64))
    return numpy.asarray(numpy.where(x64 >= 0, 1.0 / (1.0 + e), e / (1.0 + e))).astype(x.dtype)


@testing.parameterize(*testing.product({"shape": [(3, 2), (), (2, 3, 4)], "dtype": FLOATS}))
class TestSigmoid(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-3, 3, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (sigmoid(inputs[0]),)

    def forward_expected(self, inputs):
        return (reference(inputs[0]),)


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_inputs_saturate_without_overflow(dtype):
    x = numpy.array([-1e4, -100.0, -30.0, 0.0, 30.0, 100.0, 1e4]).astype(dtype)
    y = sigmoid(x).array
    assert y.dtype == dtype
    testing.assert_allclose(y, reference(x), **testing.tolerances(dtype))
    assert y[0] == 0 and y[-1] == 1 and y[3] == 0.5


def test_gradient_is_y_times_one_minus_y():
    data = numpy.linspace(-4, 4, 9)
    x = Variable(data)
    y = sigmoid(x)
    ops.sum(y).backward()
    s = 1 / (1 + numpy.exp(-data))
    testing.assert_allclose(x.grad, s * (1 - s), atol=1e-15, rtol=1e-12)


def test_non_float_input():
    with pytest.raises(InvalidType) as e:
        sigmoid(numpy.zeros(3, numpy.int64))
    assert "Sigmoid" in str(e.value)
    assert "x.dtype.kind == 'f'" in str(e.value)
