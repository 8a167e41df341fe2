import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.squeeze import squeeze

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((1, 3, 1, 2), None),
                ((1, 3, 1, 2), 0),
                ((1, 3, 1, 2), 2),
                ((1, 3, 1, 2), -2),
                ((1, 3, 1, 2), (0, 2)),
                ((1, 3, 1, 2), (-4, -2)),
                ((1, 3, 1, 2), ()),
                ((1,), None),
                ((1, 1), (1,)),
                ((2, 3), None),
                ((1, 0), 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSqueeze(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (squeeze(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        ndim = len(self.shape)
        if self.axis is None:
            removed = {i for i, n in enumerate(self.shape) if n == 1}
        else:
            axes = (self.axis,) if isinstance(self.axis, int) else self.axis
            removed = {a % ndim for a in axes}
        shape = [n for i, n in enumerate(self.shape) if i not in removed]
        return (inputs[0].reshape(shape),)

    function = staticmethod(squeeze)

    def bad_inputs(self):
        x = numpy.zeros((1, 3, 1), numpy.float32)
        return [
            ((x, 1), ValueError, "squeeze: expected axis 1 of x to have length 1"),
            ((x, 3), InvalidType, "x.ndim > 3"),
            ((x, (0, -3)), ValueError, "squeeze: duplicate value in axis (0, -3)"),
            ((x, 0.0), TypeError, "squeeze: expected axis to be an int or a tuple of ints"),
        ]


def test_squeeze_accepts_a_list_of_axes():
    assert squeeze(numpy.zeros((1, 2, 1), numpy.float32), [0, 2]).shape == (2,)
