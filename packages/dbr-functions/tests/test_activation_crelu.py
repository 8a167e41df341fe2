import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.crelu import crelu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPE_AXIS = [((3, 2), 1), ((3, 2), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((4,), 0)]


def reference(x, axis):
    return (numpy.concatenate([numpy.maximum(x, 0), numpy.maximum(-x, 0)], axis=axis),)


@testing.parameterize(*testing.product({"shape,axis": SHAPE_AXIS, "dtype": FLOATS}))
class TestCReLU(FunctionTestCase):
    def generate_inputs(self):
        sign = numpy.where(numpy.random.uniform(size=self.shape) < 0.5, -1.0, 1.0)
        x = sign * numpy.random.uniform(0.1, 1.0, self.shape)
        return (numpy.asarray(x).astype(self.dtype),)

    def forward(self, inputs, device):
        return (crelu(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        return reference(inputs[0], self.axis)

    function = staticmethod(crelu)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x.astype(numpy.int32),), InvalidType, ("CReLU", "x.dtype.kind == 'f'")),
            ((x,), {"axis": 2}, InvalidType, "x.ndim > 2"),
            ((x,), {"axis": None}, TypeError, "crelu: expected axis to be an int, got None"),
        ]


def test_default_axis_and_gradient():
    x = Variable(numpy.array([[-1.0, 2.0, 0.0]], numpy.float32))
    y = crelu(x)
    assert y.shape == (1, 6)
    numpy.testing.assert_array_equal(y.array, [[0.0, 2.0, 0.0, 1.0, 0.0, 0.0]])
    y.grad = numpy.arange(1, 7, dtype=numpy.float32).reshape(1, 6)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[-4.0, 2.0, 0.0]])
