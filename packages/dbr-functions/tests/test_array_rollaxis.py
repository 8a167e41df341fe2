import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.rollaxis import rollaxis

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "axis,start,expected_order": [
                (0, 0, (0, 1, 2, 3)),
                (2, 0, (2, 0, 1, 3)),
                (3, 1, (0, 3, 1, 2)),
                (0, 4, (1, 2, 3, 0)),
                (0, 2, (1, 0, 2, 3)),
                (1, 1, (0, 1, 2, 3)),
                (1, 2, (0, 1, 2, 3)),
                (-1, 0, (3, 0, 1, 2)),
                (0, -1, (1, 2, 0, 3)),
                (3, -4, (3, 0, 1, 2)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestRollaxis(FunctionTestCase):
    shape = (2, 3, 4, 5)

    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (rollaxis(inputs[0], self.axis, self.start),)

    def forward_expected(self, inputs):
        return (inputs[0].transpose(self.expected_order),)

    function = staticmethod(rollaxis)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, 2), InvalidType, ("Rollaxis", "x.ndim > 2")),
            ((x, 0, 3), InvalidType, "x.ndim >= 3"),
            ((x, 0, -3), InvalidType, "-x.ndim <= -3"),
            ((x, 0, None), TypeError, "rollaxis: expected start to be an int, got None"),
            ((x, (0,)), TypeError, "rollaxis: expected axis to be an int"),
        ]


def test_default_start_is_0():
    assert rollaxis(numpy.zeros((2, 3, 4), numpy.float32), 2).shape == (4, 2, 3)
