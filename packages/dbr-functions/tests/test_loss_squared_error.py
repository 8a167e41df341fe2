import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.loss.squared_error import squared_difference, squared_error

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
FUNCTIONS = {"squared_error": squared_error, "squared_difference": squared_difference}


@testing.parameterize(
    *testing.product(
        {"function": list(FUNCTIONS), "shape": [(4, 3), (), (2, 3, 2)], "dtype": FLOATS}
    )
)
class TestSquaredError(FunctionTestCase):
    def generate_inputs(self):
        x0 = numpy.random.uniform(-1, 1, self.shape)
        x1 = numpy.random.uniform(-1, 1, self.shape)
        return numpy.asarray(x0).astype(self.dtype), numpy.asarray(x1).astype(self.dtype)

    def forward(self, inputs, device):
        return (FUNCTIONS[self.function](*inputs),)

    def forward_expected(self, inputs):
        x0, x1 = inputs
        diff = x0.astype(numpy.float64) - x1.astype(numpy.float64)
        return (numpy.asarray(diff * diff).astype(self.dtype),)


@pytest.mark.parametrize(
    "function, label, names",
    [
        (squared_error, "SquaredError", ("x0", "x1")),
        (squared_difference, "SquaredDifference", ("x1", "x2")),
    ],
)
def test_bad_input(function, label, names):
    with pytest.raises(InvalidType) as e:
        function(numpy.zeros((2, 3), numpy.float32), numpy.zeros((3, 2), numpy.float32))
    assert label in str(e.value)
    assert f"{names[0]}.shape == {names[1]}.shape" in str(e.value)
    with pytest.raises(InvalidType) as e:
        function(numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.float16))
    assert f"{names[0]}.dtype == {names[1]}.dtype" in str(e.value)
    with pytest.raises(InvalidType) as e:
        function(numpy.zeros(3, numpy.int32), numpy.zeros(3, numpy.int32))
    assert f"{names[0]}.dtype.kind == 'f'" in str(e.value)
