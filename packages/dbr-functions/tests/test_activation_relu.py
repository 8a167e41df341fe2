import numpy
import pytest

from dbr.core import Variable, grad, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.relu import relu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def away_from_zero(shape, dtype, low=0.1, high=1.0):
    """Values with magnitude in [low, high) and a random sign (clear of relu's kink)."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(*testing.product({"shape": [(3, 2), (), (2, 3, 4)], "dtype": FLOATS}))
class TestReLU(FunctionTestCase):
    def generate_inputs(self):
        return (away_from_zero(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (relu(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray(numpy.where(x > 0, x, 0)).astype(x.dtype),)


def test_values_and_gradient_at_the_kink():
    data = numpy.array([-2.0, -0.0, 0.0, 1e-30, 3.5], numpy.float32)
    x = Variable(data)
    y = relu(x)
    assert y.dtype == numpy.float32
    numpy.testing.assert_array_equal(y.array, numpy.array([0, 0, 0, data[3], 3.5], numpy.float32))
    y.grad = numpy.full(5, 2.0, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0, 2.0, 2.0])


def test_nan_propagates():
    y = relu(numpy.array([numpy.nan, -1.0], numpy.float64))
    assert numpy.isnan(y.array[0]) and y.array[1] == 0.0


def test_broadcast_output_gradient_of_a_sum():
    x = Variable(numpy.array([[-1.0, 2.0], [3.0, -4.0]], numpy.float32))
    ops.sum(relu(x)).backward()
    numpy.testing.assert_array_equal(x.grad, [[0.0, 1.0], [1.0, 0.0]])


def test_second_order_gradient_is_zero_in_x_and_masks_in_gy():
    x = Variable(numpy.array([-1.0, 2.0], numpy.float64))
    (gx,) = grad([relu(x)], [x], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [0.0, 1.0])
    gy = Variable(numpy.array([5.0, 7.0]))
    (gx,) = grad([relu(x)], [x], [gy], enable_double_backprop=True)
    (ggy,) = grad([gx], [gy], [Variable(numpy.array([1.0, 1.0]))])
    numpy.testing.assert_array_equal(ggy.array, [0.0, 1.0])
    (ggx,) = grad([gx], [x], [Variable(numpy.array([1.0, 1.0]))])
    assert ggx is None or not ggx.array.any()


def test_accepts_arrays_and_keeps_the_input():
    x = numpy.array([-1.0, 1.0], numpy.float16)
    y = relu(x)
    assert isinstance(y, Variable) and y.dtype == numpy.float16
    numpy.testing.assert_array_equal(x, [-1.0, 1.0])


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.bool_])
def test_non_float_input(dtype):
    with pytest.raises(InvalidType) as e:
        relu(numpy.zeros((2, 3), dtype))
    assert "ReLU" in str(e.value)
    assert "x.dtype.kind == 'f'" in str(e.value)


def test_empty_batch():
    x = Variable(numpy.zeros((0, 5), numpy.float32))
    ops.sum(relu(x)).backward()
    assert x.grad.shape == (0, 5)


def test_a_list_is_refused_naming_the_function_and_the_type():
    with pytest.raises(
        TypeError, match=r"^ReLU: expected input 0 to be a Variable or an array .*got list$"
    ):
        relu([1.0, -1.0])
