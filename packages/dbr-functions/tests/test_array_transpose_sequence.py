import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.transpose_sequence import transpose_sequence

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "lengths,unit": [
                ((4, 3, 3, 1), ()),
                ((4, 3, 3, 1), (2,)),
                ((2, 2), (2, 3)),
                ((3,), (2,)),
                ((3, 2, 0), (2,)),
                ((1, 1, 1), ()),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestTransposeSequence(FunctionTestCase):
    def generate_inputs(self):
        return tuple([uniform((n,) + self.unit, self.dtype) for n in self.lengths])

    def forward(self, inputs, device):
        return transpose_sequence(inputs)

    def forward_expected(self, inputs):
        ys = []
        for t in range(len(inputs[0])):
            rows = [x[t] for x in inputs if len(x) > t]
            y = numpy.empty((len(rows),) + self.unit, self.dtype)
            for i, r in enumerate(rows):
                y[i] = r
            ys.append(y)
        return tuple(ys)

    function = staticmethod(transpose_sequence)

    def bad_inputs(self):
        f32 = numpy.float32
        return [
            (
                ([numpy.zeros(1, f32), numpy.zeros(2, f32)],),
                InvalidType,
                ("TransposeSequence", "xs[0].shape[0] >= xs[1].shape[0]"),
            ),
            (
                ([numpy.zeros((2, 3), f32), numpy.zeros((2, 2), f32)],),
                InvalidType,
                "xs[1].shape[1:] == xs[0].shape[1:]",
            ),
            (
                ([numpy.zeros(2, f32), numpy.zeros(2, numpy.float64)],),
                InvalidType,
                "xs[1].dtype == xs[0].dtype",
            ),
            (([numpy.zeros((), f32)],), InvalidType, "xs[0].ndim >= 1"),
        ]


def test_transposing_twice_gives_the_sequences_back():
    xs = [numpy.arange(n, dtype=numpy.float32) + 10 * n for n in (3, 2, 2)]
    back = transpose_sequence(transpose_sequence(xs))
    assert len(back) == 3
    for x, y in zip(xs, back):
        numpy.testing.assert_array_equal(y.array, x)


def test_unused_steps_and_empty_sequences_get_zero_gradients():
    xs = [Variable(numpy.ones(n, numpy.float32)) for n in (3, 1, 0)]
    ys = transpose_sequence(xs)
    assert [y.shape for y in ys] == [(2,), (1,), (1,)]
    ys[0].grad = numpy.array([5, 6], numpy.float32)
    ys[0].backward()
    numpy.testing.assert_array_equal(xs[0].grad, [5, 0, 0])
    numpy.testing.assert_array_equal(xs[1].grad, [6])
    assert xs[2].grad.shape == (0,)


def test_empty_input_gives_empty_output():
    assert transpose_sequence([]) == ()
