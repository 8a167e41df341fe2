import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.swish import swish

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPES = [((4, 3), (3,)), ((2, 3, 4), (3,)), ((2, 3, 4), (3, 4)), ((2, 3), ())]


def reference(x, beta):
    x64 = x.astype(numpy.float64)
    b = beta.astype(numpy.float64).reshape((1,) + beta.shape + (1,) * (x.ndim - beta.ndim - 1))
    return numpy.asarray(x64 / (1.0 + numpy.exp(-b * x64))).astype(x.dtype)


@testing.parameterize(*testing.product({"shapes": SHAPES, "dtype": FLOATS}))
class TestSwish(FunctionTestCase):
    def generate_inputs(self):
        x_shape, beta_shape = self.shapes
        x = numpy.random.uniform(-2, 2, x_shape)
        beta = numpy.random.uniform(-1.5, 1.5, beta_shape)
        return numpy.asarray(x).astype(self.dtype), numpy.asarray(beta).astype(self.dtype)

    def forward(self, inputs, device):
        return (swish(*inputs),)

    def forward_expected(self, inputs):
        return (reference(*inputs),)

    function = staticmethod(swish)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros(4, numpy.float32)),
                InvalidType,
                ("Swish", "x.shape[1:1 + beta.ndim] == beta.shape"),
            ),
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros(3, numpy.float64)),
                InvalidType,
                "beta.dtype == x.dtype",
            ),
            (
                (numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.float32)),
                InvalidType,
                "x.ndim >= beta.ndim + 1",
            ),
            (
                (numpy.zeros((2, 3), numpy.int32), numpy.zeros(3, numpy.int32)),
                InvalidType,
                "x.dtype.kind == 'f'",
            ),
        ]


def test_special_betas():
    x = numpy.linspace(-3, 3, 7).reshape(1, 7)
    testing.assert_allclose(swish(x, numpy.zeros(7)).array, x / 2, atol=1e-15, rtol=0)
    testing.assert_allclose(
        swish(x, numpy.full(7, 1e4)).array, numpy.maximum(x, 0), atol=1e-15, rtol=0
    )


def test_beta_gradient_sums_over_the_batch():
    x = Variable(numpy.array([[1.0, -2.0], [0.5, 3.0]]))
    beta = Variable(numpy.array([0.5, 2.0]))
    y = swish(x, beta)
    y.grad = numpy.ones((2, 2))
    y.backward()
    s = 1 / (1 + numpy.exp(-beta.array * x.array))
    expected = (x.array * x.array * s * (1 - s)).sum(axis=0)
    testing.assert_allclose(beta.grad, expected, atol=1e-15, rtol=1e-13)
