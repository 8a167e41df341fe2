import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.fmod import fmod

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _ratios(shape):
    """x / divisor away from integers (where fmod jumps): k + f, k in -3..3, f in [0.2, 0.8]."""
    k = numpy.random.randint(-3, 4, shape)
    return k + numpy.random.uniform(0.2, 0.8, shape)


def _magnitudes(shape):
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return sign * numpy.random.uniform(0.5, 1.5, shape)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                ((3, 2), (3, 2)),
                ((), ()),
                ((3, 2), (2,)),
                ((3, 2), (1, 2)),
                ((2,), (3, 2)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestFmod(FunctionTestCase):
    def generate_inputs(self):
        x_shape, d_shape = self.shapes
        shape = numpy.broadcast_shapes(x_shape, d_shape)
        if shape == x_shape:
            divisor = _magnitudes(d_shape)
            x = divisor * _ratios(shape)
        else:
            x = _magnitudes(x_shape)
            divisor = x / _ratios(shape)
        return numpy.asarray(x).astype(self.dtype), numpy.asarray(divisor).astype(self.dtype)

    def forward(self, inputs, device):
        return (fmod(*inputs),)

    def forward_expected(self, inputs):
        x, divisor = (a.astype(numpy.float64) for a in inputs)
        return (numpy.asarray(numpy.fmod(x, divisor)).astype(self.dtype),)


def test_result_has_the_sign_of_the_dividend():
    x = numpy.array([5.5, -5.5, 5.5, -5.5, 1.0])
    d = numpy.array([2.0, 2.0, -2.0, -2.0, 3.0])
    numpy.testing.assert_array_equal(fmod(x, d).array, [1.5, -1.5, 1.5, -1.5, 1.0])


def test_gradients_are_one_and_minus_fix_of_the_quotient():
    x = Variable(numpy.array([5.5, -5.5, 7.25, 0.5]))
    d = Variable(numpy.array([2.0, 2.0, -2.0, 3.0]))
    gx, gd = grad([fmod(x, d)], [x, d], [Variable(numpy.ones(4))])
    numpy.testing.assert_array_equal(gx.array, numpy.ones(4))
    numpy.testing.assert_array_equal(gd.array, [-2.0, 2.0, 3.0, -0.0])


def test_broadcast_divisor_gradient_is_summed():
    x = Variable(numpy.array([[5.5, 1.0], [-7.5, 2.5]]))
    d = Variable(numpy.array([2.0, 0.75]))
    gx, gd = grad([fmod(x, d)], [x, d], [Variable(numpy.ones((2, 2)))])
    assert gx.shape == (2, 2) and gd.shape == (2,)
    numpy.testing.assert_array_equal(gd.array, [-(2.0 - 3.0), -(1.0 + 3.0)])


def test_second_order_gradient_wrt_the_inputs_is_zero():
    x = Variable(numpy.array([5.5, -1.25]))
    d = Variable(numpy.array([2.0, 0.5]))
    gx, gd = grad([fmod(x, d)], [x, d], [Variable(numpy.ones(2))], enable_double_backprop=True)
    ggx, ggd = grad([gd], [x, d], [Variable(numpy.ones(2))])
    for g in (ggx, ggd):
        assert g is None or not g.array.any()


_X23 = numpy.ones((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_X23, numpy.ones((2, 3), numpy.float64)),
            InvalidType,
            ("Fmod", "divisor.dtype == x.dtype"),
        ),
        ((_X23, numpy.ones((4,), numpy.float32)), InvalidType, ("x.shape", "divisor.shape")),
        ((numpy.arange(3), numpy.arange(1, 4)), InvalidType, "x.dtype.kind == 'f'"),
    ],
    function=fmod,
)
