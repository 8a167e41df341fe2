import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.linear_interpolate import LinearInterpolateGrad, linear_interpolate

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product({"shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS})
)
class TestLinearInterpolate(FunctionTestCase):
    def generate_inputs(self):
        p = numpy.random.uniform(0, 1, self.shape)
        x = numpy.random.uniform(-1, 1, self.shape)
        y = numpy.random.uniform(-1, 1, self.shape)
        return tuple(numpy.asarray(a).astype(self.dtype) for a in (p, x, y))

    def forward(self, inputs, device):
        return (linear_interpolate(*inputs),)

    def forward_expected(self, inputs):
        p, x, y = (a.astype(numpy.float64) for a in inputs)
        return (numpy.asarray(p * x + (1 - p) * y).astype(self.dtype),)


def test_endpoints_and_gradients():
    p = Variable(numpy.array([0.0, 0.25, 1.0]))
    x = Variable(numpy.array([4.0, 4.0, 4.0]))
    y = Variable(numpy.array([-1.0, 0.0, 2.0]))
    z = linear_interpolate(p, x, y)
    numpy.testing.assert_array_equal(z.array, [-1.0, 1.0, 4.0])
    gp, gx, gy = grad([z], [p, x, y], [Variable(numpy.full(3, 2.0))])
    numpy.testing.assert_array_equal(gp.array, [10.0, 8.0, 4.0])
    numpy.testing.assert_array_equal(gx.array, [0.0, 0.5, 2.0])
    numpy.testing.assert_array_equal(gy.array, [2.0, 1.5, 0.0])


def test_only_the_requested_gradients_are_computed():
    p = Variable(numpy.array([0.5, 0.25]))
    x = numpy.array([1.0, 2.0])
    y = Variable(numpy.array([3.0, -1.0]))
    z = linear_interpolate(p, x, y)
    gp, gy = grad([z], [p, y], [Variable(numpy.ones(2))], enable_double_backprop=True)
    assert isinstance(gp.creator, LinearInterpolateGrad)
    assert gp.creator.indexes == (0, 2)
    assert len(gp.creator.outputs) == 2
    numpy.testing.assert_array_equal(gp.array, [-2.0, 3.0])
    numpy.testing.assert_array_equal(gy.array, [0.5, 0.75])


def test_second_order_gradients_have_the_closed_form():
    p = Variable(numpy.array([0.5, 0.25]))
    x = Variable(numpy.array([1.0, 2.0]))
    y = Variable(numpy.array([3.0, -1.0]))
    gz = Variable(numpy.array([2.0, -1.0]))
    gp, gx, gy = grad([linear_interpolate(p, x, y)], [p, x, y], [gz], enable_double_backprop=True)
    # d/dp (gp + gx + gy) = d/dp ((x - y) gz + p gz + (1 - p) gz) = 0; d/dx = gz; d/dy = -gz
    ggp, ggx, ggy, ggz = grad([gp + gx + gy], [p, x, y, gz], [Variable(numpy.ones(2))])
    assert ggp is None or not ggp.array.any()
    numpy.testing.assert_array_equal(ggx.array, gz.array)
    numpy.testing.assert_array_equal(ggy.array, -gz.array)
    numpy.testing.assert_array_equal(ggz.array, x.array - y.array + 1.0)


_A = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_A, numpy.zeros((3, 2), numpy.float32), _A),
            InvalidType,
            ("LinearInterpolate", "x.shape == p.shape"),
        ),
        ((_A, _A, numpy.zeros(3, numpy.float32)), InvalidType, "y.shape == p.shape"),
        ((_A, _A, _A.astype(numpy.float64)), InvalidType, "y.dtype == p.dtype"),
        ((numpy.zeros(2, numpy.int32),) * 3, InvalidType, "p.dtype.kind == 'f'"),
    ],
    function=linear_interpolate,
)
