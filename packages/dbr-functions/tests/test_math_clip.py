import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.clip import clip

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "bounds": [(-0.5, 0.5), (None, 0.25), (-0.25, None), (-2, 1)],
            "shape": [(3, 4), (), (2, 3, 4), (0, 2)],
            "dtype": FLOATS,
        }
    )
)
class TestClip(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-2.5, 2.5, self.shape)
        for bound in self.bounds:
            if bound is not None:
                # keep away from the kinks at the bounds
                x = numpy.where(numpy.abs(x - bound) < 0.1, bound + 0.2, x)
        return (numpy.asarray(x).astype(self.dtype),)

    def forward(self, inputs, device):
        return (clip(inputs[0], *self.bounds),)

    def forward_expected(self, inputs):
        x = inputs[0]
        x_min, x_max = self.bounds
        y = x
        if x_min is not None:
            y = numpy.where(y < x_min, x_min, y)
        if x_max is not None:
            y = numpy.where(y > x_max, x_max, y)
        return (numpy.asarray(y).astype(x.dtype),)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gradient_is_one_inside_including_the_bounds_and_zero_outside(dtype):
    x = Variable(numpy.array([-2.0, -1.0, 0.0, 1.0, 2.0], dtype))
    y = clip(x, -1.0, 1.0)
    numpy.testing.assert_array_equal(y.array, [-1.0, -1.0, 0.0, 1.0, 1.0])
    (gx,) = grad([y], [x], [Variable(numpy.full(5, 3.0, dtype))])
    assert gx.dtype == dtype
    numpy.testing.assert_array_equal(gx.array, [0.0, 3.0, 3.0, 3.0, 0.0])


def test_one_sided_bounds():
    x = Variable(numpy.array([-2.0, 0.0, 2.0]))
    y = clip(x, None, 1.0)
    numpy.testing.assert_array_equal(y.array, [-2.0, 0.0, 1.0])
    (gx,) = grad([y], [x], [Variable(numpy.ones(3))])
    numpy.testing.assert_array_equal(gx.array, [1.0, 1.0, 0.0])
    y = clip(x, -1.0, None)
    numpy.testing.assert_array_equal(y.array, [-1.0, 0.0, 2.0])
    (gx,) = grad([y], [x], [Variable(numpy.ones(3))])
    numpy.testing.assert_array_equal(gx.array, [0.0, 1.0, 1.0])


def test_second_order_gradient_is_zero_and_grad_of_gy_is_the_mask():
    x = Variable(numpy.array([-2.0, 0.5, 2.0]))
    gy = Variable(numpy.array([1.0, 2.0, 3.0]))
    (gx,) = grad([clip(x, -1.0, 1.0)], [x], [gy], enable_double_backprop=True)
    ggx, ggy = grad([gx], [x, gy], [Variable(numpy.ones(3))])
    assert ggx is None or not ggx.array.any()
    numpy.testing.assert_array_equal(ggy.array, [0.0, 1.0, 0.0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_is_kept_with_python_and_numpy_float64_bounds(dtype):
    x = numpy.array([0.3, -4.0, 4.0], dtype)
    for bounds in [(-1.0, 1.0), (numpy.float64(-1.0), numpy.float64(1.0)), (-1, 1), (None, 1)]:
        y = clip(x, *bounds)
        assert y.dtype == dtype
    y = clip(numpy.array(4.0, dtype), -1.0, 1.0)
    assert y.shape == () and isinstance(y.array, numpy.ndarray) and y.array == 1.0


def test_nan_propagates():
    y = clip(numpy.array([numpy.nan, 3.0]), -1.0, 1.0)
    assert numpy.isnan(y.array[0]) and y.array[1] == 1.0


X = numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        ((X, None, None), ValueError, "clip: expected x_min or x_max to be set"),
        ((X, 1.0, 1.0), ValueError, "clip: expected x_min < x_max, got x_min=1.0, x_max=1.0"),
        ((X, 2.0, -2.0), ValueError, "x_min < x_max"),
        ((X, "0", 1.0), TypeError, "clip: expected x_min to be a real scalar or None"),
        ((X, 0.0, numpy.ones(3)), TypeError, "clip: expected x_max to be a real scalar or None"),
        ((numpy.arange(3), 0.0, 1.0), InvalidType, ("Clip", "x.dtype.kind == 'f'")),
    ],
    function=clip,
)
