import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.softplus import softplus

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x, beta):
    t = beta * x.astype(numpy.float64)
    y = numpy.maximum(t, 0) + numpy.log1p(numpy.exp(-numpy.abs(t)))
    return numpy.asarray(y / beta).astype(x.dtype)


@testing.parameterize(
    *testing.product(
        {
            "shape": [(3, 2), (), (2, 3, 4)],
            "beta": [1.0, 2.5, -1.0, numpy.array(1.5), numpy.array(2, numpy.int32)],
            "dtype": FLOATS,
        }
    )
)
class TestSoftplus(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (softplus(inputs[0], beta=self.beta),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.beta),)

    function = staticmethod(softplus)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((x.astype(numpy.int32),), InvalidType, ("Softplus", "x.dtype.kind == 'f'")),
            ((x,), {"beta": 0}, ValueError, "softplus: expected beta to be nonzero"),
            ((x,), {"beta": "2"}, TypeError, "softplus: expected beta to be a real number"),
            ((x,), {"beta": numpy.array([2.0])}, TypeError, "expected beta to be a real number"),
            ((x,), {"beta": numpy.array(True)}, TypeError, "expected beta to be a real number"),
            ((x,), {"beta": numpy.array(0.0)}, ValueError, "expected beta to be nonzero"),
        ]


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_inputs_are_stable(dtype):
    x = numpy.array([-1e4, -30.0, 0.0, 30.0, 1e4]).astype(dtype)
    y = softplus(x).array
    assert numpy.isfinite(y).all()
    testing.assert_allclose(y, reference(x, 1.0), **testing.tolerances(dtype))


def test_gradient_is_sigmoid_of_beta_x():
    data = numpy.linspace(-3, 3, 7)
    x = Variable(data)
    y = softplus(x, beta=2.0)
    y.grad = numpy.ones(7)
    y.backward()
    testing.assert_allclose(x.grad, 1 / (1 + numpy.exp(-2.0 * data)), atol=1e-15, rtol=1e-13)
