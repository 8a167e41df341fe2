import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.decov import decov

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(h, reduce):
    h = h.astype(numpy.float64)
    n, m = h.shape
    c = numpy.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                c[i, j] = numpy.sum((h[:, i] - h[:, i].mean()) * (h[:, j] - h[:, j].mean())) / n
    return 0.5 * numpy.sum(c * c) if reduce == "half_squared_sum" else c


@testing.parameterize(
    *testing.product(
        {"reduce": ["half_squared_sum", "no"], "shape": [(5, 3), (4, 1), (1, 2)], "dtype": FLOATS}
    )
)
class TestDeCov(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (decov(inputs[0], reduce=self.reduce),)

    def forward_expected(self, inputs):
        return (numpy.asarray(_reference(inputs[0], self.reduce)).astype(self.dtype),)


def test_default_reduce():
    h = numpy.array([[1.0, 2.0], [-1.0, 0.0]], numpy.float32)
    y = decov(h)
    assert y.shape == () and float(y.array) == 1.0


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3), numpy.float32),),
            {"reduce": "sum"},
            ValueError,
            "decov: expected reduce to be 'half_squared_sum' or 'no', got 'sum'",
        ),
        ((numpy.zeros((2, 3), numpy.int32),), InvalidType, ("DeCov", "h.dtype.kind == 'f'")),
        ((numpy.zeros(3, numpy.float32),), InvalidType, ("DeCov", "h.ndim == 2")),
        ((numpy.zeros((2, 3, 1), numpy.float32),), InvalidType, ("DeCov", "h.ndim == 2")),
    ],
    function=decov,
)
