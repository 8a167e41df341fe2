import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.prod import Prod, prod

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def factors(shape, dtype):
    """Random signs, magnitudes in [0.5, 1.5): products stay moderate and away from zero."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(0.5, 1.5, shape)).astype(dtype)


SHAPES_AXES = [
    ((3, 4), None),
    ((3, 4), 0),
    ((3, 4), -1),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (2, 0)),
    ((2, 3, 4), (1, 2)),
    ((2, 3, 4), ()),
    ((), None),
    ((5,), 0),
    ((0, 4), 0),
    ((0, 4), 1),
]


@testing.parameterize(
    *testing.product({"x_shape,axis": SHAPES_AXES, "keepdims": [False, True], "dtype": FLOATS})
)
class TestProd(FunctionTestCase):
    def generate_inputs(self):
        return (factors(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (prod(inputs[0], axis=self.axis, keepdims=self.keepdims),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        return (numpy.asarray(x.prod(axis=self.axis, keepdims=self.keepdims), self.dtype),)

    function = staticmethod(prod)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": (0, 2)},
                InvalidType,
                ("Prod", "x.ndim == 2"),
            ),
            ((numpy.zeros(3, numpy.int32),), InvalidType, ("Prod", "x.dtype.kind == 'f'")),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": (0, 0)},
                ValueError,
                "prod: duplicate value in axis (0, 0)",
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": (0, -2)},
                ValueError,
                "prod: duplicate value in axis (0, -2) of an x of 2 axes",
            ),
        ]


@testing.parameterize(
    *testing.product(
        {
            "zeros": [[(0, 1)], [(0, 1), (0, 3)], [(1, 0), (2, 2), (2, 3)]],
            "axis": [None, 0, 1, (0, 1)],
            "dtype": FLOATS,
        }
    )
)
class TestProdWithZeros(FunctionTestCase):
    """One or more exact zeros per reduction: gradients without division by x."""

    def generate_inputs(self):
        x = factors((3, 4), self.dtype)
        for index in self.zeros:
            x[index] = 0
        return (x,)

    def forward(self, inputs, device):
        return (prod(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        return (numpy.asarray(x.prod(axis=self.axis), self.dtype),)


def test_prod_gradient_with_one_zero_by_hand():
    x = Variable(numpy.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]]))
    y = prod(x, axis=1)
    assert type(y.creator) is Prod
    (gx,) = grad([y], [x], enable_double_backprop=True)
    testing.assert_allclose(gx, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]], atol=0, rtol=0)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones((2, 3)))])
    # d/dx of x1 x2 + x0 x2 + x0 x1 at (2, 0, 3) and at (0, 0, 5)
    testing.assert_allclose(ggx, [[3.0, 5.0, 2.0], [5.0, 5.0, 0.0]], atol=0, rtol=0)


def test_prod_of_float16_accumulates_in_float32():
    x = numpy.array([300.0, 300.0, 1.0 / 300.0], numpy.float16)
    testing.assert_allclose(prod(x), 300.0, atol=0, rtol=1e-2)
