import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.where import where

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                ((3, 2), (3, 2), (3, 2)),
                ((3, 2), (2,), (3, 1)),
                ((1, 4), (3, 1), ()),
                ((), (2, 3), (2, 3)),
                ((2, 1, 3), (4, 1), (3,)),
                ((0, 2), (0, 2), (1, 2)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestWhere(FunctionTestCase):
    def before_test(self, test_name):
        c_shape = self.shapes[0]
        self.condition = numpy.random.uniform(0, 1, c_shape) > 0.5

    def generate_inputs(self):
        _, x_shape, y_shape = self.shapes
        x = numpy.random.uniform(-1, 1, x_shape).astype(self.dtype)
        y = numpy.random.uniform(-1, 1, y_shape).astype(self.dtype)
        return x, y

    def forward(self, inputs, device):
        condition = device.send(self.condition)
        return (where(condition, *inputs),)

    def forward_expected(self, inputs):
        x, y = inputs
        c = self.condition
        # Arithmetic selection, independent of numpy.where.
        out = c * x.astype(numpy.float64) + (~c) * y.astype(numpy.float64)
        return (numpy.asarray(out).astype(self.dtype),)

    function = staticmethod(where)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((numpy.zeros((2, 3), numpy.int32), x, x), InvalidType, ("Where", "condition.dtype")),
            (
                (numpy.ones((2, 3), bool), x, x.astype(numpy.float64)),
                InvalidType,
                "x.dtype == y.dtype",
            ),
            ((numpy.ones((4,), bool), x, x), InvalidType, ("condition.shape", "(4,)")),
        ]


def test_condition_may_be_a_variable_or_a_list():
    x = numpy.array([1.0, 2.0], numpy.float32)
    y = numpy.array([-1.0, -2.0], numpy.float32)
    expected = numpy.array([1.0, -2.0], numpy.float32)
    for condition in (Variable(numpy.array([True, False])), [True, False]):
        testing.assert_allclose(where(condition, x, y).array, expected, atol=0, rtol=0)


def test_gradients_are_split_by_the_condition():
    x = Variable(numpy.array([[1.0, 2.0, 3.0]]))
    y = Variable(numpy.array([[4.0], [5.0]]))
    condition = numpy.array([[True, False, True], [False, False, True]])
    gx, gy = grad([where(condition, x, y)], [x, y], [Variable(numpy.ones((2, 3)))])
    testing.assert_allclose(gx.array, [[1.0, 0.0, 2.0]], atol=0, rtol=0)
    testing.assert_allclose(gy.array, [[1.0], [2.0]], atol=0, rtol=0)
