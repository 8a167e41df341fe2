import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.scatter_add import scatter_add

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

_SLICES = {
    "int": ((3, 4), 1),
    "slice": ((3, 4), (slice(None), slice(1, 3))),
    "ellipsis": ((2, 3, 4), (Ellipsis, 2)),
    "newaxis": ((3, 4), (None, 1)),
    "negative-step": ((5,), slice(None, None, -2)),
    "repeated-ints": ((3, 4), numpy.array([0, 2, 0, 0])),
    "int-list": ((3, 4), [2, 2, 1]),
    "empty-list": ((4, 2, 3), []),
    "empty-lists-per-axis": ((3, 4), ([], [])),
    "ints-per-axis": ((3, 4), ([0, 1, 0], [3, 3, 3])),
    "ints-and-slice": ((3, 4, 2), (slice(None), numpy.array([[1, 1], [0, 3]]))),
    "bool-mask": ((3, 4), numpy.array([True, False, True])),
    "2d-bool-mask": ((3, 4), numpy.arange(12).reshape(3, 4) % 5 == 0),
}


def _positions(shape, slices):
    # The elements of an array of ``shape`` that ``slices`` selects, in order, with repeats.
    ids = numpy.arange(int(numpy.prod(shape))).reshape(shape)
    return ids[slices]


def _scatter_add_reference(a, slices, b):
    out = a.astype(numpy.float64).ravel()
    positions = _positions(a.shape, slices)
    for position, value in zip(positions.ravel(), b.astype(numpy.float64).ravel()):
        out[position] += value
    return out.reshape(a.shape).astype(a.dtype)


@testing.parameterize(*testing.product({"case": list(_SLICES), "dtype": FLOATS}))
class TestScatterAdd(FunctionTestCase):
    def generate_inputs(self):
        shape, slices = _SLICES[self.case]
        a = numpy.random.uniform(-1, 1, shape).astype(self.dtype)
        b = numpy.random.uniform(-1, 1, _positions(shape, slices).shape).astype(self.dtype)
        return a, b

    def forward(self, inputs, device):
        a, b = inputs
        return (scatter_add(a, _SLICES[self.case][1], b),)

    def forward_expected(self, inputs):
        a, b = inputs
        return (_scatter_add_reference(a, _SLICES[self.case][1], b),)

    function = staticmethod(scatter_add)

    def bad_inputs(self):
        a = numpy.zeros((3, 4), numpy.float32)
        return [
            (
                (a, 1, numpy.zeros(3, numpy.float32)),
                ValueError,
                "scatter_add: expected b of the shape of a[slices], (4,) (it is not broadcast), "
                "got (3,)",
            ),
            # broadcastable, but not broadcast (as in Chainer)
            ((a, 1, numpy.zeros(1, numpy.float32)), ValueError, "a[slices], (4,)"),
            (
                (a, numpy.array([0, 0]), numpy.zeros(4, numpy.float32)),
                ValueError,
                "a[slices], (2, 4)",
            ),
            ((a, 1, numpy.zeros(4, numpy.float64)), InvalidType, "a.dtype == b.dtype"),
            (
                (a, (0, 5), numpy.zeros((), numpy.float32)),
                InvalidType,
                ("slices valid for a.shape", "(3, 4)"),
            ),
            (
                (a, (Ellipsis, Ellipsis), a),
                ValueError,
                "scatter_add: expected at most one Ellipsis",
            ),
        ]


def test_input_is_not_modified_and_repeats_accumulate():
    a = numpy.zeros(3, numpy.float32)
    y = scatter_add(a, numpy.array([0, 2, 0]), numpy.array([1.0, 2.0, 3.0], numpy.float32))
    testing.assert_allclose(y.array, [4.0, 0.0, 2.0], atol=0, rtol=0)
    testing.assert_allclose(a, [0.0, 0.0, 0.0], atol=0, rtol=0)


def test_gradient_of_b_gathers_repeated_positions():
    a = Variable(numpy.zeros(3))
    b = Variable(numpy.zeros(3))
    gy = Variable(numpy.array([1.0, 2.0, 3.0]))
    ga, gb = grad([scatter_add(a, [0, 2, 0], b)], [a, b], [gy])
    testing.assert_allclose(ga.array, [1.0, 2.0, 3.0], atol=0, rtol=0)
    testing.assert_allclose(gb.array, [1.0, 3.0, 1.0], atol=0, rtol=0)


def test_slices_may_be_a_variable():
    a = numpy.zeros(3, numpy.float32)
    index = Variable(numpy.array([1, 1]))
    y = scatter_add(a, index, numpy.ones(2, numpy.float32))
    testing.assert_allclose(y.array, [0.0, 2.0, 0.0], atol=0, rtol=0)
