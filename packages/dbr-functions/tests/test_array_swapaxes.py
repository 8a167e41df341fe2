import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.swapaxes import swapaxes

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


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

    function = staticmethod(swapaxes)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, 0, 2), InvalidType, ("Swapaxes", "x.ndim > 2")),
            ((x, -3, 0), InvalidType, "-x.ndim <= -3"),
            ((x, 0, None), TypeError, "swapaxes: expected axis2 to be an int, got None"),
        ]
