import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.diagonal import diagonal

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _diagonal_reference(x, offset, axis1, axis2):
    axis1 %= x.ndim
    axis2 %= x.ndim
    rest = [a for a in range(x.ndim) if a not in (axis1, axis2)]
    n1, n2 = x.shape[axis1], x.shape[axis2]
    pairs = [(i, i + offset) for i in range(n1) if 0 <= i + offset < n2]
    out = numpy.empty(tuple(x.shape[a] for a in rest) + (len(pairs),), x.dtype)
    for index in numpy.ndindex(*out.shape[:-1]):
        for k, (i, j) in enumerate(pairs):
            full = [0] * x.ndim
            for a, v in zip(rest, index):
                full[a] = v
            full[axis1], full[axis2] = i, j
            out[index + (k,)] = x[tuple(full)]
    return out


@testing.parameterize(
    *testing.product(
        {
            "shape,offset,axis1,axis2": [
                ((3, 3), 0, 0, 1),
                ((3, 4), 1, 0, 1),
                ((4, 3), -2, 0, 1),
                ((3, 4), 0, 1, 0),
                ((2, 3, 4), 1, 1, 2),
                ((2, 3, 4), -1, 0, 2),
                ((2, 3, 4), 0, -1, -3),
                ((2, 3, 4, 2), 0, 0, 3),
                ((2, 3), 5, 0, 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestDiagonal(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (diagonal(inputs[0], self.offset, self.axis1, self.axis2),)

    def forward_expected(self, inputs):
        return (_diagonal_reference(inputs[0], self.offset, self.axis1, self.axis2),)

    function = staticmethod(diagonal)

    def bad_inputs(self):
        return [
            ((numpy.zeros(3, numpy.float32),), InvalidType, ("Diagonal", "x.ndim >= 2")),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis2": 2},
                InvalidType,
                ("axis2", "x.ndim == 2"),
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis1": 1, "axis2": -1},
                InvalidType,
                "different axes",
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"offset": 1.5},
                TypeError,
                "diagonal: expected offset to be an int, got 1.5",
            ),
        ]


def test_output_is_writable_and_gradient_lies_on_the_diagonal():
    x = Variable(numpy.zeros((2, 3)))
    y = diagonal(x, offset=1)
    assert y.array.flags.writeable
    y.grad = numpy.array([1.0, 2.0])
    y.backward()
    testing.assert_allclose(x.grad, [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]], atol=0, rtol=0)
