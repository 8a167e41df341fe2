import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.layer_normalization import layer_normalization

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def reference(x, gamma, beta, eps):
    x = x.astype(numpy.float64)
    rows = [(row - row.mean()) / numpy.sqrt(row.var() + eps) for row in x]
    y = numpy.array(rows).reshape(x.shape)
    return y * gamma.astype(numpy.float64) + beta.astype(numpy.float64)


@testing.parameterize(
    *testing.product(
        {"shape": [(3, 5), (1, 4), (4, 2), (0, 3)], "dtype": FLOATS, "eps": [1e-5, 1.0]}
    )
)
class TestLayerNormalization(FunctionTestCase):
    def generate_inputs(self):
        n, d = self.shape
        # Spread-out values in each row keep the row variances away from 0.
        rows = numpy.linspace(-1, 1, d) + numpy.random.uniform(-0.2, 0.2, (n, d))
        x = numpy.random.permutation(rows.T).T + 2
        return (
            x.astype(self.dtype),
            uniform(0.5, 1.5, (d,), self.dtype),
            uniform(-1, 1, (d,), self.dtype),
        )

    def forward(self, inputs, device):
        return (layer_normalization(*inputs, eps=self.eps),)

    def forward_expected(self, inputs):
        return (reference(*inputs, self.eps).astype(self.dtype),)


def test_rows_are_normalized_independently():
    x = numpy.array([[1.0, 2.0, 3.0], [100.0, 300.0, 200.0]], numpy.float32)
    y = layer_normalization(x, numpy.ones(3, numpy.float32), numpy.zeros(3, numpy.float32), 0)
    k = numpy.sqrt(1.5)
    testing.assert_allclose(y.array, [[-k, 0, k], [-k, k, 0]], atol=1e-6, rtol=1e-6)


_P = numpy.ones(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3, 1), numpy.float32), _P, _P),
            InvalidType,
            ("LayerNormalization", "x.ndim == 2"),
        ),
        (
            (numpy.zeros((2, 4), numpy.float32), _P, _P),
            InvalidType,
            ("LayerNormalization", "x.shape[1] == gamma.shape[0]"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float64), _P, _P),
            InvalidType,
            ("LayerNormalization", "gamma.dtype == x.dtype"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), _P, numpy.ones(2, numpy.float32)),
            InvalidType,
            ("LayerNormalization", "beta.shape"),
        ),
        (
            (numpy.zeros((2, 0), numpy.float32), _P[:0], _P[:0]),
            InvalidType,
            ("LayerNormalization", "x.shape[1] > 0"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), _P, _P),
            {"eps": "1"},
            TypeError,
            "layer_normalization: expected eps to be a real number",
        ),
    ],
    function=layer_normalization,
)
