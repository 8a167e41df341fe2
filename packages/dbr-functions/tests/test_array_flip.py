import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.flip import flip, fliplr, flipud

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(shape, dtype):
    return numpy.asarray(numpy.random.uniform(-1, 1, shape)).astype(dtype)


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


def test_bad_input():
    with pytest.raises(InvalidType) as info:
        flip(numpy.zeros((2, 3), numpy.float32), 2)
    assert "Flip" in str(info.value) and "x.ndim > 2" in str(info.value)
    with pytest.raises(InvalidType) as info:
        flip(numpy.zeros((), numpy.float32), 0)
    assert "x.ndim > 0" in str(info.value)
    with pytest.raises(TypeError, match="flip: expected axis to be an int, got None"):
        flip(numpy.zeros(3, numpy.float32), None)
    with pytest.raises(InvalidType) as info:
        fliplr(numpy.zeros(3, numpy.float32))
    assert "FlipLR" in str(info.value) and "a.ndim >= 2" in str(info.value)
    with pytest.raises(InvalidType) as info:
        flipud(numpy.zeros((), numpy.float32))
    assert "FlipUD" in str(info.value) and "a.ndim >= 1" in str(info.value)
