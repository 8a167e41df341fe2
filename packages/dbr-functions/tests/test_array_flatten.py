import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.functions.array.flatten import flatten

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape": [(3, 4), (2, 3, 4), (5,), (), (0, 3)],
            "dtype": FLOATS,
        }
    )
)
class TestFlatten(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (flatten(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        y = numpy.empty(x.size, self.dtype)
        for i, index in enumerate(numpy.ndindex(*x.shape)):
            y[i] = x[index]
        return (y,)


def test_flatten_of_an_array_and_of_integers():
    y = flatten(numpy.arange(6, dtype=numpy.int32).reshape(3, 2))
    assert isinstance(y, Variable) and y.dtype == numpy.int32
    numpy.testing.assert_array_equal(y.array, numpy.arange(6))
