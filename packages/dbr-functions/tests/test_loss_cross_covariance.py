import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.cross_covariance import cross_covariance

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(y, z, reduce):
    y = y.astype(numpy.float64)
    z = z.astype(numpy.float64)
    n = len(y)
    c = numpy.zeros((y.shape[1], z.shape[1]))
    for i in range(y.shape[1]):
        for j in range(z.shape[1]):
            c[i, j] = numpy.sum((y[:, i] - y[:, i].mean()) * (z[:, j] - z[:, j].mean())) / n
    return 0.5 * numpy.sum(c * c) if reduce == "half_squared_sum" else c


@testing.parameterize(
    *testing.product(
        {
            "reduce": ["half_squared_sum", "no"],
            "shapes": [((5, 3), (5, 2)), ((4, 1), (4, 4)), ((1, 2), (1, 3))],
            "dtype": FLOATS,
        }
    )
)
class TestCrossCovariance(FunctionTestCase):
    def generate_inputs(self):
        y_shape, z_shape = self.shapes
        y = numpy.random.uniform(-1, 1, y_shape).astype(self.dtype)
        z = numpy.random.uniform(-1, 1, z_shape).astype(self.dtype)
        return y, z

    def forward(self, inputs, device):
        y, z = inputs
        return (cross_covariance(y, z, reduce=self.reduce),)

    def forward_expected(self, inputs):
        y, z = inputs
        return (numpy.asarray(_reference(y, z, self.reduce)).astype(self.dtype),)


def test_default_reduce():
    y = numpy.array([[1.0, 0.0], [-1.0, 2.0]], numpy.float32)
    z = numpy.array([[2.0], [0.0]], numpy.float32)
    assert cross_covariance(y, z).shape == ()
    assert float(cross_covariance(y, z).array) == 1.0


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3), numpy.float32),) * 2,
            {"reduce": "mean"},
            ValueError,
            "cross_covariance: expected reduce to be 'half_squared_sum' or 'no', got 'mean'",
        ),
        (
            (numpy.zeros((2, 3), numpy.int32), numpy.zeros((2, 3), numpy.int32)),
            InvalidType,
            ("CrossCovariance", "y.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros((2, 3), numpy.float64)),
            InvalidType,
            ("CrossCovariance", "y.dtype == z.dtype"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros((3, 1), numpy.float32)),
            InvalidType,
            ("CrossCovariance", "y.ndim == 2"),
        ),
        (
            (numpy.zeros((3, 1), numpy.float32), numpy.zeros(3, numpy.float32)),
            InvalidType,
            ("CrossCovariance", "z.ndim == 2"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros((3, 3), numpy.float32)),
            InvalidType,
            ("CrossCovariance", "y.shape[0] == z.shape[0]"),
        ),
    ],
    function=cross_covariance,
)
