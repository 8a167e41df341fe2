import os

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.cholesky import Cholesky, cholesky


def positive_definite(n, dtype):
    b = numpy.random.uniform(-1, 1, (n, n))
    return (b @ b.T + n * numpy.eye(n)).astype(dtype)


@testing.parameterize(*testing.product({"n": [1, 2, 4], "dtype": [numpy.float32, numpy.float64]}))
class TestCholesky(FunctionTestCase):
    def generate_inputs(self):
        return (positive_definite(self.n, self.dtype),)

    def forward(self, inputs, device):
        # The gradient is the one along symmetric perturbations, so the numerical
        # check perturbs a through its symmetric part.
        a = inputs[0]
        return (cholesky((a + a.T) * 0.5),)

    def forward_expected(self, inputs):
        return (numpy.linalg.cholesky(inputs[0].astype(numpy.float64)).astype(self.dtype),)


FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "cholesky_grad.npz")


def reference_gradient(a, gy):
    """The symmetric gradient written out: sym(L^-T Phi(L^T gy) L^-1), Phi = tril, halved diag."""
    lower = numpy.linalg.cholesky(a)
    n = len(a)
    phi = numpy.tril(lower.T @ gy)
    phi[numpy.diag_indices(n)] *= 0.5
    lower_inv = numpy.linalg.inv(lower)
    s = lower_inv.T @ phi @ lower_inv
    return (s + s.T) / 2


def test_factor_reproduces_the_input_and_the_gradient_is_symmetric():
    a = positive_definite(3, numpy.float64)
    x = Variable(a)
    y = cholesky(x)
    assert type(y.creator) is Cholesky
    testing.assert_allclose(y.array @ y.array.T, a, atol=1e-12, rtol=0)
    gy = numpy.random.uniform(-1, 1, (3, 3))
    (gx,) = grad([y], [x], [Variable(gy)])
    numpy.testing.assert_array_equal(gx.array, gx.array.T)
    numpy.testing.assert_allclose(gx.array, reference_gradient(a, gy), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_gradient_matches_chainer(n):
    # tests/fixtures/make_cholesky_grad.py wrote Chainer 7.8.1's gradients.
    with numpy.load(FIXTURE) as f:
        a, gy, expected = f[f"a_{n}"], f[f"gy_{n}"], f[f"gx_{n}"]
    x = Variable(a)
    y = cholesky(x)
    y.grad = gy
    y.backward()
    numpy.testing.assert_allclose(x.grad, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 3, 4])
def test_gradient_is_the_derivative_along_symmetric_perturbations(n):
    a = positive_definite(n, numpy.float64)
    gy = numpy.tril(numpy.random.uniform(-1, 1, (n, n)))
    x = Variable(a)
    y = cholesky(x)
    y.grad = gy
    y.backward()
    eps = 1e-6
    for i in range(n):
        for j in range(i + 1):
            e = numpy.zeros((n, n))
            e[i, j] = e[j, i] = 1.0
            plus = numpy.sum(gy * numpy.linalg.cholesky(a + eps * e))
            minus = numpy.sum(gy * numpy.linalg.cholesky(a - eps * e))
            numerical = (plus - minus) / (2 * eps)
            numpy.testing.assert_allclose(numpy.sum(x.grad * e), numerical, rtol=1e-6, atol=1e-8)


test_bad_input = bad_input_test(
    [
        (
            (numpy.ones((2, 3), numpy.float32),),
            InvalidType,
            ("Cholesky", "a.shape[0] == a.shape[1]"),
        ),
        ((numpy.ones((2, 2, 2), numpy.float64),), InvalidType, ("Cholesky", "a.ndim == 2")),
        ((numpy.ones((2, 2), numpy.int32),), InvalidType, ("Cholesky", "a.dtype.kind == 'f'")),
        ((numpy.ones((2, 2), numpy.float16),), InvalidType, ("Cholesky", "a.dtype != ")),
        (
            (numpy.array([[1.0, 2.0], [2.0, 1.0]], numpy.float32),),
            ValueError,
            "cholesky: the input is not positive definite",
        ),
    ],
    function=cholesky,
)
