import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.prelu import prelu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPES = [((4, 3), (3,)), ((2, 3, 4), (3,)), ((2, 3, 4), (3, 4)), ((2, 3), ())]


def away_from_zero(shape, low=0.1, high=1.0):
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return sign * numpy.random.uniform(low, high, shape)


def reference(x, W):
    x64 = x.astype(numpy.float64)
    w = W.astype(numpy.float64).reshape((1,) + W.shape + (1,) * (x.ndim - W.ndim - 1))
    return numpy.asarray(numpy.where(x64 >= 0, x64, w * x64)).astype(x.dtype)


@testing.parameterize(*testing.product({"shapes": SHAPES, "dtype": FLOATS}))
class TestPReLU(FunctionTestCase):
    def generate_inputs(self):
        x_shape, w_shape = self.shapes
        x = numpy.asarray(away_from_zero(x_shape)).astype(self.dtype)
        W = numpy.asarray(numpy.random.uniform(-1, 1, w_shape)).astype(self.dtype)
        return x, W

    def forward(self, inputs, device):
        return (prelu(*inputs),)

    def forward_expected(self, inputs):
        return (reference(*inputs),)

    function = staticmethod(prelu)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.float32)),
                InvalidType,
                ("PReLU", "x.shape[1:1 + W.ndim] == W.shape"),
            ),
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros(3, numpy.float16)),
                InvalidType,
                "W.dtype == x.dtype",
            ),
            (
                (numpy.zeros((3,), numpy.float32), numpy.zeros(3, numpy.float32)),
                InvalidType,
                "x.ndim >= W.ndim + 1",
            ),
        ]


def test_gradients():
    x = Variable(numpy.array([[-1.0, 2.0], [-3.0, -4.0], [0.0, 1.0]]))
    W = Variable(numpy.array([0.25, 0.5]))
    y = prelu(x, W)
    numpy.testing.assert_array_equal(y.array, [[-0.25, 2.0], [-0.75, -2.0], [0.0, 1.0]])
    y.grad = numpy.ones((3, 2))
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[0.25, 1.0], [0.25, 0.5], [1.0, 1.0]])
    numpy.testing.assert_array_equal(W.grad, [-4.0, -4.0])
