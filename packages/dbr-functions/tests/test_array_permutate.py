import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.permutate import permutate

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape,axis,indices": [
                ((3, 2), 0, (2, 0, 1)),
                ((3, 2), 1, (1, 0)),
                ((3, 2), -1, (1, 0)),
                ((2, 4, 3), 1, (3, 1, 0, 2)),
                ((2, 4, 3), -3, (0, 1)),
                ((5,), 0, (4, 2, 3, 0, 1)),
                ((0, 2), 0, ()),
            ],
            "inv": [False, True],
            "index_dtype": [numpy.int32, numpy.int64],
            "dtype": FLOATS,
        }
    )
)
class TestPermutate(FunctionTestCase):
    def generate_inputs(self):
        x = uniform(self.shape, self.dtype)
        return x, numpy.array(self.indices, self.index_dtype)

    def forward(self, inputs, device):
        x, indices = inputs
        return (permutate(x, indices, axis=self.axis, inv=self.inv),)

    def forward_expected(self, inputs):
        x, indices = inputs
        axis = self.axis % x.ndim
        y = numpy.empty_like(x)
        for i, j in enumerate(indices):
            src, dst = (i, j) if self.inv else (j, i)
            y[(slice(None),) * axis + (dst,)] = x[(slice(None),) * axis + (src,)]
        return (y,)

    function = staticmethod(permutate)

    def bad_inputs(self):
        x = numpy.zeros((3, 2), numpy.float32)
        return [
            (
                (x, numpy.array([0, 1], numpy.int32)),
                InvalidType,
                ("Permutate", "x.shape[0] == indices.shape[0]"),
            ),
            ((x, numpy.array([0, 1, 2], numpy.float32)), InvalidType, "indices.dtype.kind == 'i'"),
            ((x, numpy.array([[0, 1, 2]], numpy.int32)), InvalidType, "indices.ndim == 1"),
            ((x, numpy.array([0, 1], numpy.int32)), {"axis": 2}, InvalidType, "x.ndim > 2"),
            (
                (x, numpy.array([0, 0, 1], numpy.int32)),
                ValueError,
                "permutate: expected indices to be a permutation",
            ),
            (
                (x, numpy.array([0, 1, 3], numpy.int32)),
                ValueError,
                "permutation of range(3), got [0, 1, 3]",
            ),
            (
                (x, numpy.array([-1, 0, 1], numpy.int32)),
                ValueError,
                "permutation of range(3), got [-1,  0,  1]",
            ),
            (
                (x, numpy.array([0, 1, 2], numpy.int32)),
                {"axis": None},
                TypeError,
                "permutate: expected axis to be an int",
            ),
        ]


def test_indices_as_a_variable():
    x = Variable(numpy.arange(3, dtype=numpy.float32))
    indices = Variable(numpy.array([2, 0, 1], numpy.int32))
    y = permutate(x, indices)
    numpy.testing.assert_array_equal(y.array, [2, 0, 1])
    y.grad = numpy.array([10, 20, 30], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [20, 30, 10])
