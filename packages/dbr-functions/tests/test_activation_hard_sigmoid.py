import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.hard_sigmoid import hard_sigmoid

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x):
    x64 = x.astype(numpy.float64)
    return numpy.asarray(numpy.clip(0.2 * x64 + 0.5, 0.0, 1.0)).astype(x.dtype)


@testing.parameterize(*testing.product({"shape": [(3, 2), (), (2, 3, 4)], "dtype": FLOATS}))
class TestHardSigmoid(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-3.5, 3.5, self.shape)
        # Keep clear of the kinks at +-2.5.
        x = numpy.where(numpy.abs(numpy.abs(x) - 2.5) < 0.1, 0.0, x)
        return (numpy.asarray(x).astype(self.dtype),)

    def forward(self, inputs, device):
        return (hard_sigmoid(inputs[0]),)

    def forward_expected(self, inputs):
        return (reference(inputs[0]),)

    function = staticmethod(hard_sigmoid)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((x.astype(numpy.int16),), InvalidType, ("HardSigmoid", "x.dtype.kind == 'f'")),
        ]


def test_values_and_gradient():
    x = Variable(numpy.array([-3.0, -2.5, -1.0, 0.0, 2.0, 2.5, 4.0]))
    y = hard_sigmoid(x)
    testing.assert_allclose(y.array, [0.0, 0.0, 0.3, 0.5, 0.9, 1.0, 1.0], atol=1e-15, rtol=0)
    y.grad = numpy.ones(7)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.2, 0.2, 0.2, 0.0, 0.0])
