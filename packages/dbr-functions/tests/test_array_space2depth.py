import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.depth2space import depth2space
from dbr.functions.array.space2depth import space2depth

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _space2depth_reference(x, r):
    n, c, hr, wr = x.shape
    h, w = hr // r, wr // r
    y = numpy.empty((n, r * r * c, h, w), x.dtype)
    for b, k, i, j, p, q in numpy.ndindex(n, c, h, w, r, r):
        y[b, (p * r + q) * c + k, i, j] = x[b, k, i * r + p, j * r + q]
    return y


@testing.parameterize(
    *testing.product(
        {
            "shape,r": [
                ((2, 1, 6, 4), 2),
                ((1, 2, 4, 6), 2),
                ((2, 3, 3, 6), 3),
                ((1, 3, 2, 2), 1),
                ((0, 2, 4, 4), 2),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSpace2Depth(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (space2depth(inputs[0], self.r),)

    def forward_expected(self, inputs):
        return (_space2depth_reference(inputs[0], self.r),)

    function = staticmethod(space2depth)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((1, 1, 3, 4), numpy.float32), 2),
                InvalidType,
                ("Space2Depth", "X.shape[2] % 2 == 0"),
            ),
            ((numpy.zeros((1, 1, 4, 3), numpy.float32), 2), InvalidType, "X.shape[3] % 2 == 0"),
            ((numpy.zeros((1, 4, 4), numpy.float32), 2), InvalidType, "X.ndim == 4"),
            (
                (numpy.zeros((1, 1, 4, 4), numpy.float32), -1),
                ValueError,
                "space2depth: expected r >= 1, got -1",
            ),
        ]


def test_inverse_of_depth2space():
    x = numpy.random.uniform(-1, 1, (2, 3, 4, 6)).astype(numpy.float32)
    testing.assert_allclose(depth2space(space2depth(x, 2), 2).array, x, atol=0, rtol=0)
