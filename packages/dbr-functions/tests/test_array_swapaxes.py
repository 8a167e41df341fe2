import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.swapaxes import swapaxes

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(shape, dtype):
    return numpy.asarray(numpy.random.uniform(-1, 1, shape)).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "axis1,axis2,expected_order": [
                (0, 1, (1, 0, 2)),
                (0, 2, (2, 1, 0)),
                (2, 0, (2, 1, 0)),
                (1, 1, (0, 1, 2)),
                (-1, 0, (2, 1, 0)),
                (-2, -1, (0, 2, 1)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSwapaxes(FunctionTestCase):
    shape = (2, 3, 4)

    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (swapaxes(inputs[0], self.axis1, self.axis2),)

    def forward_expected(self, inputs):
        return (inputs[0].transpose(self.expected_order),)


def test_bad_input():
    x = numpy.zeros((2, 3), numpy.float32)
    with pytest.raises(InvalidType) as info:
        swapaxes(x, 0, 2)
    assert "Swapaxes" in str(info.value) and "x.ndim > 2" in str(info.value)
    with pytest.raises(InvalidType) as info:
        swapaxes(x, -3, 0)
    assert "-x.ndim <= -3" in str(info.value)
    with pytest.raises(TypeError, match="swapaxes: expected axis2 to be an int, got None"):
        swapaxes(x, 0, None)
