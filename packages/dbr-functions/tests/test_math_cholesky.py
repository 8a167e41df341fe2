import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.cholesky import Cholesky, cholesky


def positive_definite(n, dtype):
    b = numpy.random.uniform(-1, 1, (n, n))
    return (b @ b.T + n * numpy.eye(n)).astype(dtype)


@testing.parameterize(*testing.product({"n": [1, 2, 4], "dtype": [numpy.float32, numpy.float64]}))
class TestCholesky(FunctionTestCase):
    def generate_inputs(self):
        return (positive_definite(self.n, self.dtype),)

    def forward(self, inputs, device):
        return (cholesky(inputs[0]),)

    def forward_expected(self, inputs):
        return (numpy.linalg.cholesky(inputs[0].astype(numpy.float64)).astype(self.dtype),)


def test_factor_reproduces_the_input_and_only_the_lower_triangle_gets_gradients():
    a = positive_definite(3, numpy.float64)
    x = Variable(a)
    y = cholesky(x)
    assert type(y.creator) is Cholesky
    testing.assert_allclose(y.array @ y.array.T, a, atol=1e-12, rtol=0)
    (gx,) = grad([y], [x], [Variable(numpy.random.uniform(-1, 1, (3, 3)))])
    assert not numpy.triu(gx.array, 1).any()


def test_not_positive_definite_raises_value_error():
    with pytest.raises(ValueError, match="cholesky: the input is not positive definite"):
        cholesky(numpy.array([[1.0, 2.0], [2.0, 1.0]], numpy.float32))


@pytest.mark.parametrize(
    ("shape", "dtype", "expect"),
    [
        ((2, 3), numpy.float32, "a.shape[0] == a.shape[1]"),
        ((2, 2, 2), numpy.float64, "a.ndim == 2"),
        ((2, 2), numpy.int32, "a.dtype.kind == 'f'"),
        ((2, 2), numpy.float16, "a.dtype != "),
    ],
)
def test_bad_input_raises_invalid_type(shape, dtype, expect):
    with pytest.raises(InvalidType) as info:
        cholesky(numpy.ones(shape, dtype))
    message = str(info.value)
    assert "Cholesky" in message and expect in message
