import numpy
import pytest

from dbr.core import Variable, grad, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.sign import sign

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(*testing.product({"shape": [(3, 4), (), (2, 0)], "dtype": FLOATS}))
class TestSign(FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        x = numpy.random.uniform(-1.0, 1.0, self.shape)
        x[numpy.abs(x) < 0.2] = 0.0
        return (numpy.asarray(x).astype(self.dtype),)

    def forward(self, inputs, device):
        return (sign(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        return (numpy.asarray((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)),)

    function = staticmethod(sign)

    def bad_inputs(self):
        return [
            ((numpy.array([True, False]),), InvalidType, ("sign", "x.dtype.kind in 'fiu'", "'b'")),
            ((1.5,), TypeError, ("sign: expected x to be a Variable", "got float")),
        ]


def test_known_values():
    y = sign(numpy.array([-2.5, -0.0, 0.0, 1e-30, 7.0], numpy.float64))
    numpy.testing.assert_array_equal(y.array, [-1.0, 0.0, 0.0, 1.0, 1.0])


def test_output_carries_no_gradient_and_has_no_creator():
    x = Variable(numpy.array([-1.5, 0.25, 2.75], numpy.float32))
    y = sign(x)
    assert y.creator is None
    assert not y.requires_grad
    ops.sum(y * x).backward()
    testing.assert_allclose(x.grad, y.array, atol=0, rtol=0)
    (gx,) = grad([ops.sum(y)], [x])
    assert gx is None


@pytest.mark.parametrize("dtype", [numpy.int8, numpy.int32, numpy.int64])
def test_integer_input_keeps_its_dtype(dtype):
    y = sign(numpy.array([-5, 0, 3], dtype))
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, [-1, 0, 1])


def test_0d_input_gives_a_0d_array():
    y = sign(numpy.array(-3.0, numpy.float32))
    assert isinstance(y.array, numpy.ndarray)
    assert y.shape == () and y.array == -1.0
