import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.flip import _flip, flip, fliplr, flipud

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reversed_along(x, axis):
    """Reference: element i along axis taken from n - 1 - i, by explicit indices."""
    axis %= x.ndim
    n = x.shape[axis]
    return numpy.take(x, numpy.arange(n - 1, -1, -1, dtype=numpy.intp), axis=axis)


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((4,), 0),
                ((4,), -1),
                ((2, 3), 0),
                ((2, 3), 1),
                ((2, 3, 4), 2),
                ((2, 3, 4), -2),
                ((0, 3), 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestFlip(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (flip(inputs[0], self.axis),)

    def forward_expected(self, inputs):
        return (reversed_along(inputs[0], self.axis),)


@testing.parameterize(
    *testing.product(
        {
            "kind,shape": [
                ("lr", (2, 3)),
                ("lr", (2, 3, 4)),
                ("ud", (3,)),
                ("ud", (3, 2)),
                ("ud", (3, 2, 4)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestFlipLRUD(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return ((fliplr if self.kind == "lr" else flipud)(inputs[0]),)

    def forward_expected(self, inputs):
        return (reversed_along(inputs[0], 1 if self.kind == "lr" else 0),)


def test_flip_is_a_view():
    x = numpy.arange(4, dtype=numpy.float32)
    assert numpy.shares_memory(flip(x, 0).array, x)


test_bad_input = bad_input_test(
    [
        ((numpy.zeros((2, 3), numpy.float32), 2), InvalidType, ("Flip", "x.ndim > 2")),
        ((numpy.zeros((), numpy.float32), 0), InvalidType, "x.ndim > 0"),
        (
            (numpy.zeros(3, numpy.float32), None),
            TypeError,
            "flip: expected axis to be an int, got None",
        ),
        (fliplr, (numpy.zeros(3, numpy.float32),), {}, InvalidType, ("FlipLR", "a.ndim >= 2")),
        (flipud, (numpy.zeros((), numpy.float32),), {}, InvalidType, ("FlipUD", "a.ndim >= 1")),
    ],
    function=flip,
)


def test_flip_helper_is_numpy_flip():
    x = numpy.arange(24.0).reshape(2, 3, 4)
    for axis in (0, 1, -1):
        numpy.testing.assert_array_equal(_flip(x, axis), numpy.flip(x, axis))
