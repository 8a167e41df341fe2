import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.local_response_normalization import (
    local_response_normalization,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x, n, k, alpha, beta):
    """A loop over channels, summing the squares in each window explicitly."""
    x = x.astype(numpy.float64)
    channels = x.shape[1]
    half = n // 2
    y = numpy.empty_like(x)
    for c in range(channels):
        lo, hi = max(0, c - half), min(channels - 1, c + half)
        s = (x[:, lo : hi + 1] ** 2).sum(axis=1)
        y[:, c] = x[:, c] / (k + alpha * s) ** beta
    return y


@testing.parameterize(
    *testing.product(
        {
            "shape": [(2, 7, 3, 2), (3, 4), (2, 3, 5)],
            "n,k,alpha,beta": [
                (5, 2, 1e-4, 0.75),
                (3, 1, 0.5, 0.75),
                (2, 1.5, 0.3, 1.0),
                (1, 1, 0.4, 0.5),
                (9, 1, 0.2, 0.6),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestLocalResponseNormalization(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-2, 2, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        y = local_response_normalization(
            inputs[0], n=self.n, k=self.k, alpha=self.alpha, beta=self.beta
        )
        return (y,)

    def forward_expected(self, inputs):
        y = reference(inputs[0], self.n, self.k, self.alpha, self.beta)
        return (y.astype(self.dtype),)

    function = staticmethod(local_response_normalization)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros(3, numpy.float32),),
                InvalidType,
                ("LocalResponseNormalization", "x.ndim >= 2"),
            ),
            ((numpy.zeros((2, 3), numpy.int32),), InvalidType, "x.dtype.kind == 'f'"),
        ]


def test_default_arguments():
    x = numpy.random.uniform(-2, 2, (2, 6, 2)).astype(numpy.float32)
    y = local_response_normalization(x)
    testing.assert_allclose(y.array, reference(x, 5, 2, 1e-4, 0.75), atol=1e-6, rtol=1e-5)


def test_gradient_matches_the_closed_form():
    numpy.random.seed(0)
    x = numpy.random.uniform(-2, 2, (2, 5, 3))
    gy = numpy.random.uniform(-1, 1, x.shape)
    n, k, alpha, beta = 3, 1.0, 0.5, 0.75
    xv = Variable(x)
    (gx,) = grad([local_response_normalization(xv, n, k, alpha, beta)], [xv], [Variable(gy)])
    s = numpy.stack(
        [k + alpha * (x[:, max(0, c - 1) : c + 2] ** 2).sum(axis=1) for c in range(5)], axis=1
    )
    y = x * s**-beta
    t = gy * y / s
    window = numpy.stack([t[:, max(0, c - 1) : c + 2].sum(axis=1) for c in range(5)], axis=1)
    expected = gy * s**-beta - 2 * alpha * beta * x * window
    testing.assert_allclose(gx, expected, atol=1e-12, rtol=1e-10)


def test_arguments_are_checked():
    x = numpy.zeros((2, 3), numpy.float32)
    with pytest.raises(TypeError, match="local_response_normalization: expected n to be an int"):
        local_response_normalization(x, n=2.5)
    with pytest.raises(ValueError, match=r"local_response_normalization: expected n >= 1, got 0"):
        local_response_normalization(x, n=0)
    with pytest.raises(TypeError, match="expected alpha to be a real number"):
        local_response_normalization(x, alpha=None)
