import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.expm1 import expm1

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS})
)
class TestExpm1(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (expm1(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray(numpy.expm1(x.astype(numpy.float64))).astype(x.dtype),)


def test_accurate_near_zero():
    x = numpy.array([1e-10, -1e-12, 0.0])
    testing.assert_allclose(expm1(x), [1e-10 + 5e-21, -1e-12 + 5e-25, 0.0], atol=0, rtol=1e-15)
    y32 = expm1(numpy.array([1e-6], numpy.float32))
    testing.assert_allclose(y32, [1.0000005e-6], atol=0, rtol=1e-6)


def test_first_and_second_derivatives_are_exp():
    data = numpy.array([-1.5, 0.0, 1.2])
    x = Variable(data)
    (gx,) = grad([expm1(x)], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    testing.assert_allclose(gx, numpy.exp(data), atol=0, rtol=1e-12)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(ggx, numpy.exp(data), atol=0, rtol=1e-12)


def test_retains_its_output_not_its_input():
    y = expm1(Variable(numpy.array([0.5], numpy.float32)))
    assert y.creator._input_indexes_to_retain is None
    assert y.creator._output_indexes_to_retain == (0,)


def test_integer_input_raises_invalid_type():
    with pytest.raises(InvalidType) as info:
        expm1(numpy.arange(3))
    assert "Expm1" in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
