import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.activation.maxout import maxout

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
CASES = [((2, 6), 3, 1), ((2, 6), 2, -1), ((2, 3, 4), 2, -1), ((6, 2), 3, 0), ((2, 4, 3), 4, 1)]


def distinct(shape, dtype):
    """A random permutation of well-separated values, so that no group has a tie."""
    values = numpy.random.permutation(numpy.prod(shape)) * 0.25 - 1.0
    return numpy.asarray(values.reshape(shape)).astype(dtype)


def reference(x, pool_size, axis):
    axis %= x.ndim
    shape = x.shape[:axis] + (x.shape[axis] // pool_size, pool_size) + x.shape[axis + 1 :]
    return x.reshape(shape).max(axis=axis + 1)


@testing.parameterize(*testing.product({"shape,pool_size,axis": CASES, "dtype": FLOATS}))
class TestMaxout(FunctionTestCase):
    def generate_inputs(self):
        return (distinct(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (maxout(inputs[0], self.pool_size, self.axis),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.pool_size, self.axis),)


def test_default_axis_and_ties():
    x = Variable(numpy.array([[1.0, 3.0, 3.0, 2.0]], numpy.float32))
    y = maxout(x, 2)
    numpy.testing.assert_array_equal(y.array, [[3.0, 3.0]])
    y.grad = numpy.array([[10.0, 20.0]], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[0.0, 10.0, 20.0, 0.0]])
    tied = Variable(numpy.array([[5.0, 5.0]]))
    z = maxout(tied, 2)
    z.grad = numpy.ones((1, 1))
    z.backward()
    numpy.testing.assert_array_equal(tied.grad, [[1.0, 1.0]])


X = numpy.zeros((2, 6), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (X, 4),
            InvalidType,
            ("maxout", "x.shape[1] % pool_size == 0", "x.shape[1] == 6, pool_size == 4"),
        ),
        ((X, 2), {"axis": 2}, InvalidType, ("maxout", "x.ndim == 2")),
        ((numpy.zeros((2, 6), numpy.int32), 2), InvalidType, "x.dtype.kind == 'f'"),
        ((X, 0), ValueError, "maxout: expected pool_size > 0, got 0"),
        ((X, 2.0), TypeError, "maxout: expected pool_size to be an int, got 2.0"),
        ((X, 2), {"axis": None}, TypeError, "maxout: expected axis to be an int, got None"),
    ],
    function=maxout,
)
