import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.scale import scale

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# (x.shape, y.shape, axis)
CASES = [
    ((3, 4, 2), (4,), 1),
    ((3, 4, 2), (4, 2), 1),
    ((3, 4, 2), (3,), 0),
    ((3, 4, 2), (3, 4, 2), 0),
    ((3, 4, 2), (2,), 2),
    ((3, 4, 2), (2,), -1),
    ((3, 4, 2), (), 1),
    ((2, 5), (5,), 1),
    ((0, 5), (5,), 1),
]


def expected_broadcast(y, x_ndim, axis):
    """y reshaped for NumPy broadcasting against x: its axes placed at axis..axis + y.ndim."""
    if axis < 0:
        axis += x_ndim
    return y.reshape((1,) * axis + y.shape + (1,) * (x_ndim - axis - y.ndim))


@testing.parameterize(*testing.product({"case": CASES, "dtype": FLOATS}))
class TestScale(FunctionTestCase):
    def generate_inputs(self):
        x_shape, y_shape, _ = self.case
        x = numpy.random.uniform(-1, 1, x_shape)
        y = numpy.random.uniform(-1, 1, y_shape)
        return numpy.asarray(x).astype(self.dtype), numpy.asarray(y).astype(self.dtype)

    def forward(self, inputs, device):
        return (scale(*inputs, axis=self.case[2]),)

    def forward_expected(self, inputs):
        x, y = (a.astype(numpy.float64) for a in inputs)
        z = x * expected_broadcast(y, x.ndim, self.case[2])
        return (numpy.asarray(z).astype(self.dtype),)

    function = staticmethod(scale)

    def bad_inputs(self):
        x = numpy.zeros((2, 3, 4), numpy.float32)
        return [
            (
                (x, numpy.zeros((3, 5), numpy.float32)),
                InvalidType,
                ("Scale", "x.shape[1:3] == y.shape"),
            ),
            ((x, numpy.zeros(3, numpy.float16)), InvalidType, "y.dtype == x.dtype"),
            (
                (x, numpy.zeros(3, numpy.float32)),
                {"axis": 4},
                ValueError,
                "scale: expected axis in [-3, 3]",
            ),
            (
                (x, numpy.zeros(3, numpy.float32)),
                {"axis": None},
                TypeError,
                "scale: expected axis to be an int",
            ),
        ]


def test_default_axis_is_one():
    x = numpy.ones((2, 3, 4), numpy.float32)
    y = numpy.arange(3, dtype=numpy.float32)
    numpy.testing.assert_array_equal(scale(x, y).array, numpy.broadcast_to(y[:, None], (2, 3, 4)))


def test_gradients():
    xd = numpy.arange(24, dtype=numpy.float64).reshape(2, 3, 4)
    yd = numpy.array([1.0, -2.0, 0.5])
    x = Variable(xd)
    y = Variable(yd)
    gx, gy = grad([scale(x, y)], [x, y], [Variable(numpy.ones((2, 3, 4)))])
    numpy.testing.assert_array_equal(gx.array, numpy.broadcast_to(yd[:, None], (2, 3, 4)))
    numpy.testing.assert_array_equal(gy.array, xd.sum(axis=(0, 2)))
