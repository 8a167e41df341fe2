import numpy
import pytest

from dbr.core import Variable, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.tanh import tanh

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x):
    e = numpy.exp(-2.0 * numpy.abs(x.astype(numpy.float64)))
    return numpy.asarray(numpy.sign(x) * (1.0 - e) / (1.0 + e)).astype(x.dtype)


@testing.parameterize(*testing.product({"shape": [(3, 2), (), (2, 3, 4)], "dtype": FLOATS}))
class TestTanh(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (tanh(inputs[0]),)

    def forward_expected(self, inputs):
        return (reference(inputs[0]),)


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_inputs_saturate(dtype):
    x = numpy.array([-1e4, -50.0, 0.0, 50.0, 1e4]).astype(dtype)
    y = tanh(x).array
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y, numpy.array([-1, -1, 0, 1, 1], dtype))


def test_gradient_is_one_minus_y_squared():
    data = numpy.linspace(-3, 3, 7)
    x = Variable(data)
    ops.sum(tanh(x)).backward()
    testing.assert_allclose(x.grad, 1 - reference(data) ** 2, atol=1e-15, rtol=1e-12)


def test_non_float_input():
    with pytest.raises(InvalidType) as e:
        tanh(numpy.zeros(3, numpy.int32))
    assert "Tanh" in str(e.value)
    assert "x.dtype.kind == 'f'" in str(e.value)
