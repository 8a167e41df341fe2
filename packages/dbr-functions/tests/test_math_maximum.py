import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.maximum import maximum, minimum

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
FUNCTIONS = {"maximum": (maximum, numpy.maximum), "minimum": (minimum, numpy.minimum)}


def _clustered(centers, shape, dtype):
    """Values within 0.1 of ``centers``: two inputs drawn around disjoint centers never tie."""
    x = numpy.random.choice(centers, shape) + numpy.random.uniform(-0.1, 0.1, shape)
    return numpy.asarray(x).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "function": list(FUNCTIONS),
            "shapes": [((3, 2), (3, 2)), ((), ()), ((3, 2), (2,)), ((3, 1), (1, 4)), ((), (2, 3))],
            "dtype": FLOATS,
        }
    )
)
class TestMaximum(FunctionTestCase):
    def generate_inputs(self):
        shape1, shape2 = self.shapes
        x1 = _clustered([-1.0, 0.0, 1.0], shape1, self.dtype)
        x2 = _clustered([-0.5, 0.5], shape2, self.dtype)
        return x1, x2

    def forward(self, inputs, device):
        return (FUNCTIONS[self.function][0](*inputs),)

    def forward_expected(self, inputs):
        return (numpy.asarray(FUNCTIONS[self.function][1](*inputs)),)


def test_gradient_goes_to_the_selected_input():
    a = Variable(numpy.array([1.0, 5.0, -2.0]))
    b = Variable(numpy.array([3.0, 4.0, -1.0]))
    gy = Variable(numpy.array([10.0, 20.0, 30.0]))
    ga, gb = grad([maximum(a, b)], [a, b], [gy])
    numpy.testing.assert_array_equal(ga.array, [0.0, 20.0, 0.0])
    numpy.testing.assert_array_equal(gb.array, [10.0, 0.0, 30.0])
    ga, gb = grad([minimum(a, b)], [a, b], [gy])
    numpy.testing.assert_array_equal(ga.array, [10.0, 0.0, 30.0])
    numpy.testing.assert_array_equal(gb.array, [0.0, 20.0, 0.0])


@pytest.mark.parametrize("function", [maximum, minimum])
def test_ties_send_the_gradient_to_the_first_input(function):
    a = Variable(numpy.array([1.0, 2.0]))
    b = Variable(numpy.array([1.0, 2.0]))
    ga, gb = grad([function(a, b)], [a, b], [Variable(numpy.ones(2))])
    numpy.testing.assert_array_equal(ga.array, [1.0, 1.0])
    numpy.testing.assert_array_equal(gb.array, [0.0, 0.0])


def test_broadcast_gradients_are_summed_to_each_input_shape():
    a = Variable(numpy.array([[0.0, 3.0], [2.0, -1.0], [5.0, 0.5]]))
    b = Variable(numpy.array([1.0, 1.0]))
    ga, gb = grad([maximum(a, b)], [a, b], [Variable(numpy.ones((3, 2)))])
    assert ga.shape == (3, 2) and gb.shape == (2,)
    numpy.testing.assert_array_equal(ga.array, [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    numpy.testing.assert_array_equal(gb.array, [1.0, 2.0])


def test_second_order_gradients():
    a = Variable(numpy.array([1.0, 5.0]))
    b = Variable(numpy.array([3.0, 4.0]))
    gy = Variable(numpy.array([1.0, 1.0]))
    ga, gb = grad([maximum(a, b)], [a, b], [gy], enable_double_backprop=True)
    # d(ga + 2 gb)/d gy selects 1 where a wins and 2 where b wins; nothing flows to a, b
    gga, ggb, ggy = grad(
        [ga, gb], [a, b, gy], [Variable(numpy.ones(2)), Variable(numpy.full(2, 2.0))]
    )
    for g in (gga, ggb):
        assert g is None or not g.array.any()
    numpy.testing.assert_array_equal(ggy.array, [2.0, 1.0])


def test_one_input_requiring_grad():
    a = Variable(numpy.array([1.0, 5.0]))
    (ga,) = grad([minimum(a, numpy.array([3.0, 4.0]))], [a], [Variable(numpy.ones(2))])
    numpy.testing.assert_array_equal(ga.array, [1.0, 0.0])


def _bad_input_rows(function, label):
    x = numpy.ones((2, 3), numpy.float32)
    return [
        (
            function,
            (x, numpy.ones((2, 3), numpy.float64)),
            {},
            InvalidType,
            (label, "x2.dtype == x1.dtype"),
        ),
        (function, (x, numpy.ones((4,), numpy.float32)), {}, InvalidType, ("x1.shape", "(4,)")),
        (function, (numpy.arange(3), numpy.arange(3)), {}, InvalidType, "x1.dtype.kind == 'f'"),
    ]


test_bad_input = bad_input_test(
    _bad_input_rows(maximum, "Maximum") + _bad_input_rows(minimum, "Minimum")
)
