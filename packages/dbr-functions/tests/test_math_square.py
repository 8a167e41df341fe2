import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.square import square

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS})
)
class TestSquare(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (square(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray(x.astype(numpy.float64) ** 2).astype(x.dtype),)


def test_first_and_second_derivatives():
    data = numpy.array([-1.5, 0.0, 2.0])
    x = Variable(data)
    (gx,) = grad([square(x)], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, 2 * data)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    numpy.testing.assert_array_equal(ggx.array, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_is_kept_for_0d_input(dtype):
    x = Variable(numpy.array(3.0, dtype))
    y = square(x)
    assert y.dtype == dtype and y.array == 9.0
    y.backward()
    assert x.grad.dtype == dtype and x.grad == 6.0


def test_integer_input_raises_invalid_type():
    with pytest.raises(InvalidType) as info:
        square(numpy.arange(3))
    assert "Square" in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
