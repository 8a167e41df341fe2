import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.expand_dims import expand_dims

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((3,), 0),
                ((3,), 1),
                ((3,), -1),
                ((3,), -2),
                ((2, 3), 1),
                ((2, 3), 2),
                ((2, 3), -3),
                ((), 0),
                ((0, 2), 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestExpandDims(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (expand_dims(inputs[0], self.axis),)

    def forward_expected(self, inputs):
        shape = list(self.shape)
        position = self.axis % (len(shape) + 1)
        shape.insert(position, 1)
        return (inputs[0].reshape(shape),)

    function = staticmethod(expand_dims)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, 3), InvalidType, ("ExpandDims", "x.ndim >= 3")),
            ((x, -4), InvalidType, "-x.ndim - 1 <= -4"),
            ((x, (0,)), TypeError, "expand_dims: expected axis to be an int, got (0,)"),
        ]
