import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.functions.array.tile import tile

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_tile(x, reps):
    """y[i] = x[i % shape] after aligning shape and reps with leading ones."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    n = max(x.ndim, len(reps))
    shape = (1,) * (n - x.ndim) + x.shape
    reps = (1,) * (n - len(reps)) + reps
    x = x.reshape(shape)
    out_shape = tuple(s * r for s, r in zip(shape, reps))
    y = numpy.empty(out_shape, x.dtype)
    for index in numpy.ndindex(*out_shape):
        y[index] = x[tuple(i % s for i, s in zip(index, shape))]
    return y


@testing.parameterize(
    *testing.product(
        {
            "shape,reps": [
                ((3,), 2),
                ((3,), (2,)),
                ((3,), (2, 2)),
                ((2, 3), 2),
                ((2, 3), (3, 1)),
                ((2, 3), (1, 2, 2)),
                ((2, 1, 3), (2, 3)),
                ((), 3),
                ((), (2, 2)),
                ((2, 3), ()),
                ((2, 3), (0, 2)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestTile(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (tile(inputs[0], self.reps),)

    def forward_expected(self, inputs):
        return (reference_tile(inputs[0], self.reps),)

    function = staticmethod(tile)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((x, (2, -1)), ValueError, "tile: expected every element of reps to be >= 0"),
            ((x, 2.0), TypeError, "tile: expected reps to be an int or a tuple of ints"),
            (((x, x), 2), TypeError, "tile: expected x to be a Variable or an array, got tuple"),
            ((x, (2, None)), TypeError, "tile: expected reps to be an int or a tuple of ints"),
        ]


def test_gradient_sums_the_tiles():
    x = Variable(numpy.zeros(2, numpy.float32))
    y = tile(x, (2, 2))
    y.grad = numpy.arange(8, dtype=numpy.float32).reshape(2, 4)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0 + 2 + 4 + 6, 1 + 3 + 5 + 7])


def test_float16_gradient_accumulates_in_float32():
    x = Variable(numpy.zeros(1, numpy.float16))
    y = tile(x, 3000)
    y.grad = numpy.ones(3000, numpy.float16)
    y.backward()
    assert x.grad.dtype == numpy.float16
    testing.assert_allclose(x.grad, [3000.0], atol=0, rtol=1e-3)


def test_tile_of_integers():
    y = tile(numpy.array([1, 2], numpy.int32), 2)
    numpy.testing.assert_array_equal(y.array, [1, 2, 1, 2])


def test_the_gradient_of_an_integer_variable_keeps_its_dtype():
    x = Variable(numpy.arange(3, dtype=numpy.int32))
    y = tile(x, (2, 2))
    y.grad = numpy.ones(y.shape, numpy.int32)
    y.backward()
    assert x.grad.dtype == numpy.int32
    numpy.testing.assert_array_equal(x.grad, [4, 4, 4])
