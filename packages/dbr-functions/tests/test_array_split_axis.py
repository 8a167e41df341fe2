import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.split_axis import split_axis

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_split(x, spec, axis):
    """Slices of x along axis, bounded by spec (int: equal sections; list: split points)."""
    axis %= x.ndim
    n = x.shape[axis]
    if isinstance(spec, int):
        bounds = [i * (n // spec) for i in range(spec + 1)]
    else:
        bounds = [0, *[int(i) for i in spec], n]
    parts = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, end)
        parts.append(x[tuple(index)].copy())
    return tuple(parts)


@testing.parameterize(
    *testing.product(
        {
            "shape,spec,axis": [
                ((6, 4), 2, 0),
                ((6, 4), 3, 0),
                ((6, 4), 4, 1),
                ((6, 4), 2, -1),
                ((6, 4), 1, 1),
                ((6, 4), [2, 5], 0),
                ((6, 4), [1], -1),
                ((6, 4), [0, 2, 2, 4], 1),
                ((6, 4), [], 0),
                ((2, 3, 5), [1, 3], 2),
                ((2, 3, 5), numpy.array([2]), 1),
                ((0, 4), 2, 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSplitAxis(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return split_axis(inputs[0], self.spec, self.axis)

    def forward_expected(self, inputs):
        return reference_split(inputs[0], self.spec, self.axis)

    function = staticmethod(split_axis)

    def bad_inputs(self):
        x = numpy.zeros((4, 3), numpy.float32)
        return [
            ((x, 2), {"axis": 1}, InvalidType, ("SplitAxis", "x.shape[1] % 2 == 0")),
            ((x, [1, 4]), {"axis": 1}, InvalidType, "x.shape[1] >= 4"),
            ((x, 2), {"axis": 2}, InvalidType, "x.ndim > 2"),
            ((x, 2), {"axis": -3}, InvalidType, "-x.ndim <= -3"),
            (
                (x, 0),
                {"axis": 0},
                ValueError,
                "split_axis: expected indices_or_sections to be a pos",
            ),
            ((x, [2, 1]), {"axis": 0}, ValueError, ("split_axis: ", " sorted, got [2, 1]")),
            ((x, [-1]), {"axis": 0}, ValueError, ("split_axis: ", " non-negative, got [-1]")),
            (
                (x, 1.5),
                {"axis": 0},
                TypeError,
                "split_axis: expected indices_or_sections to be an int",
            ),
            (
                (x, [[1]]),
                {"axis": 0},
                TypeError,
                "split_axis: expected indices_or_sections to be an int",
            ),
            (
                (x, 2),
                {"axis": None},
                TypeError,
                "split_axis: expected axis to be an int, got None",
            ),
        ]


def test_outputs_are_views_and_tuple_by_default():
    x = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    ys = split_axis(x, 1, axis=0)
    assert isinstance(ys, tuple) and len(ys) == 1
    assert numpy.shares_memory(ys[0].array, x)


def test_force_tuple_false():
    x = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    y = split_axis(x, 1, axis=1, force_tuple=False)
    assert isinstance(y, Variable)
    numpy.testing.assert_array_equal(y.array, x)
    ys = split_axis(x, 3, axis=1, force_tuple=False)
    assert isinstance(ys, tuple) and len(ys) == 3


def test_unused_outputs_get_zero_gradients():
    x = Variable(numpy.ones((2, 5), numpy.float32))
    ys = split_axis(x, [1, 3], axis=1)
    ys[1].grad = numpy.full((2, 2), 3, numpy.float32)
    ys[1].backward()
    numpy.testing.assert_array_equal(x.grad, [[0, 3, 3, 0, 0], [0, 3, 3, 0, 0]])


def test_indices_as_an_array_and_of_integers():
    x = numpy.arange(5, dtype=numpy.int64)
    ys = split_axis(x, numpy.array([2, 4]), axis=0)
    assert [y.array.tolist() for y in ys] == [[0, 1], [2, 3], [4]]
