import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.cumsum import Cumsum, cumsum

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(shape, dtype):
    return numpy.asarray(numpy.random.uniform(-1, 1, shape)).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axis": [
                ((5,), None),
                ((5,), 0),
                ((3, 4), None),
                ((3, 4), 0),
                ((3, 4), 1),
                ((2, 3, 4), -1),
                ((2, 3, 4), -3),
                ((), None),
                ((0, 3), 0),
                ((0, 3), 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestCumsum(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (cumsum(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        return (numpy.cumsum(x, axis=self.axis).astype(self.dtype),)

    function = staticmethod(cumsum)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 2},
                InvalidType,
                ("Cumsum", "x.ndim == 2"),
            ),
            ((numpy.zeros(3, numpy.int64),), InvalidType, ("Cumsum", "x.dtype.kind == 'f'")),
            (
                (numpy.zeros(3, numpy.float32),),
                {"axis": (0,)},
                TypeError,
                "cumsum: expected axis to be None or an int",
            ),
        ]


def test_cumsum_of_float16_accumulates_in_float32():
    x = numpy.full(3000, 1.0, numpy.float16)
    y = cumsum(x)
    assert y.dtype == numpy.float16
    # float16 accumulation would stall at 2048.
    testing.assert_allclose(y.array[-1], 3000.0, atol=0, rtol=1e-3)


def test_cumsum_gradient_is_a_reverse_cumsum():
    x = Variable(numpy.zeros(4))
    y = cumsum(x)
    assert type(y.creator) is Cumsum
    y.grad = numpy.array([1.0, 2.0, 3.0, 4.0])
    y.backward()
    testing.assert_allclose(x.grad, [10.0, 9.0, 7.0, 4.0], atol=0, rtol=0)
