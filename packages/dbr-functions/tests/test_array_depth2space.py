import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.depth2space import depth2space

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _depth2space_reference(x, r):
    n, crr, h, w = x.shape
    c = crr // (r * r)
    y = numpy.empty((n, c, h * r, w * r), x.dtype)
    for b, k, i, j, p, q in numpy.ndindex(n, c, h, w, r, r):
        y[b, k, i * r + p, j * r + q] = x[b, (p * r + q) * c + k, i, j]
    return y


@testing.parameterize(
    *testing.product(
        {
            "shape,r": [
                ((2, 4, 3, 2), 2),
                ((1, 8, 2, 3), 2),
                ((2, 9, 2, 1), 3),
                ((1, 3, 2, 2), 1),
                ((0, 4, 2, 2), 2),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestDepth2Space(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (depth2space(inputs[0], self.r),)

    def forward_expected(self, inputs):
        return (_depth2space_reference(inputs[0], self.r),)

    function = staticmethod(depth2space)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((1, 6, 2, 2), numpy.float32), 2),
                InvalidType,
                ("Depth2Space", "X.shape[1] % 4 == 0"),
            ),
            ((numpy.zeros((4, 2, 2), numpy.float32), 2), InvalidType, "X.ndim == 4"),
            ((numpy.zeros((1, 4, 2, 2), numpy.int32), 2), InvalidType, "X.dtype.kind == 'f'"),
            (
                (numpy.zeros((1, 4, 2, 2), numpy.float32), 0),
                ValueError,
                "depth2space: expected r >= 1, got 0",
            ),
            (
                (numpy.zeros((1, 4, 2, 2), numpy.float32), 2.0),
                TypeError,
                "depth2space: expected r to be an int",
            ),
        ]


def test_chainer_documentation_example():
    x = numpy.arange(24, dtype=numpy.float32).reshape(1, 4, 2, 3)
    expected = [
        [0, 6, 1, 7, 2, 8],
        [12, 18, 13, 19, 14, 20],
        [3, 9, 4, 10, 5, 11],
        [15, 21, 16, 22, 17, 23],
    ]
    testing.assert_allclose(depth2space(x, 2).array[0, 0], expected, atol=0, rtol=0)
