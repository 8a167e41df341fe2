import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.log1p import log1p

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS})
)
class TestLog1p(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-0.5, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (log1p(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray(numpy.log1p(x.astype(numpy.float64))).astype(x.dtype),)


def test_accurate_near_zero():
    x = numpy.array([1e-10, -1e-12, 0.0])
    testing.assert_allclose(log1p(x), [1e-10 - 5e-21, -1e-12 - 5e-25, 0.0], atol=0, rtol=1e-15)


def test_first_and_second_derivatives_have_the_closed_form():
    data = numpy.array([-0.5, 0.0, 1.5])
    x = Variable(data)
    (gx,) = grad([log1p(x)], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    testing.assert_allclose(gx, 1 / (1 + data), atol=0, rtol=1e-12)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(ggx, -1 / (1 + data) ** 2, atol=0, rtol=1e-12)


def test_integer_input_raises_invalid_type():
    with pytest.raises(InvalidType) as info:
        log1p(numpy.arange(3))
    assert "Log1p" in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
