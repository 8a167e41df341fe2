import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.moveaxis import moveaxis

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "source,destination,expected_order": [
                (0, 0, (0, 1, 2, 3)),
                (0, 3, (1, 2, 3, 0)),
                (0, -1, (1, 2, 3, 0)),
                (-1, 0, (3, 0, 1, 2)),
                (1, 2, (0, 2, 1, 3)),
                ((0, 1), (2, 3), (2, 3, 0, 1)),
                ((0, 1), (3, 2), (2, 3, 1, 0)),
                ((3, 0), (0, 1), (3, 0, 1, 2)),
                ((-1, -4), (1, 0), (0, 3, 1, 2)),
                ((), (), (0, 1, 2, 3)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestMoveaxis(FunctionTestCase):
    shape = (2, 3, 4, 5)

    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (moveaxis(inputs[0], self.source, self.destination),)

    def forward_expected(self, inputs):
        # expected_order lists, for each output axis, the input axis it comes from.
        return (inputs[0].transpose(self.expected_order),)

    function = staticmethod(moveaxis)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, 2, 0), InvalidType, ("Moveaxis", "x.ndim > 2")),
            ((x, 0, -3), InvalidType, "-x.ndim <= -3"),
            ((x, (0, -2), (0, 1)), ValueError, "moveaxis: duplicate value in source (0, -2)"),
            ((x, (0, 1), (1, 1)), ValueError, "moveaxis: duplicate value in destination (1, 1)"),
            ((x, (0, 1), 0), ValueError, "moveaxis: expected source and destination to have"),
            ((x, "0", 1), TypeError, "moveaxis: expected source to be an int or a tuple"),
            ((x, 0, 1.0), TypeError, "moveaxis: expected destination to be an int or a tu"),
        ]
