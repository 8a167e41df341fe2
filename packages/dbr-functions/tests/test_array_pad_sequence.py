import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.pad_sequence import pad_sequence

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "lengths,unit,length,padding": [
                ((3, 1, 2), (), None, 0),
                ((3, 1, 2), (2,), None, -1.5),
                ((3, 1, 2), (2, 3), 5, 2),
                ((2, 2), (), None, 0),
                ((0, 2), (3,), 4, 1),
                ((0,), (), 0, 0),
                ((4,), (), 6, 0.25),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestPadSequence(FunctionTestCase):
    def generate_inputs(self):
        return tuple([uniform((n,) + self.unit, self.dtype) for n in self.lengths])

    def forward(self, inputs, device):
        return (pad_sequence(inputs, length=self.length, padding=self.padding),)

    def forward_expected(self, inputs):
        length = max(self.lengths) if self.length is None else self.length
        y = numpy.empty((len(inputs), length) + self.unit, self.dtype)
        for i, x in enumerate(inputs):
            for t in range(length):
                y[i, t] = x[t] if t < len(x) else self.padding
        return (y,)

    function = staticmethod(pad_sequence)

    def bad_inputs(self):
        f32 = numpy.float32
        return [
            (
                ([numpy.zeros(3, f32)],),
                {"length": 2},
                InvalidType,
                ("PadSequence", "xs[0].shape[0] <= 2"),
            ),
            (
                ([numpy.zeros((3, 2), f32), numpy.zeros((1, 3), f32)],),
                InvalidType,
                "xs[1].shape[1:] == xs[0].shape[1:]",
            ),
            (
                ([numpy.zeros(3, f32), numpy.zeros(1, numpy.float64)],),
                InvalidType,
                "xs[1].dtype == xs[0].dtype",
            ),
            (([numpy.zeros((), f32)],), InvalidType, "xs[0].ndim > 0"),
            (([],), InvalidType, "in_types.size() > 0"),
            (
                ([numpy.zeros(3, f32)],),
                {"length": 3.0},
                TypeError,
                "pad_sequence: expected length to be None or an int",
            ),
            (
                ([numpy.zeros(3, f32)],),
                {"length": -1},
                ValueError,
                "pad_sequence: expected length >= 0, got -1",
            ),
            (
                ([numpy.zeros(3, f32)],),
                {"padding": None},
                TypeError,
                "pad_sequence: expected padding to be a number",
            ),
        ]


def test_gradient_drops_the_padding():
    xs = [Variable(numpy.zeros(n, numpy.float32)) for n in (2, 1)]
    y = pad_sequence(xs, length=3)
    y.grad = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    y.backward()
    numpy.testing.assert_array_equal(xs[0].grad, [0, 1])
    numpy.testing.assert_array_equal(xs[1].grad, [3])


def test_integer_sequences():
    y = pad_sequence([numpy.array([1, 2], numpy.int32), numpy.array([3], numpy.int32)], padding=-1)
    numpy.testing.assert_array_equal(y.array, [[1, 2], [3, -1]])
    assert y.dtype == numpy.int32
