"""The module-level helpers of the distributions, which Chainer's tests read by name."""

import warnings

import numpy
import pytest

import dbr.functions as F
from dbr.core import Variable, testing
from dbr.core.gradient_check import check_backward, check_double_backward
from dbr.functions.distributions import Cauchy, Laplace
from dbr.functions.distributions._utils import xlogx
from dbr.functions.distributions.bernoulli import Bernoulli, _bernoulli_log_prob
from dbr.functions.distributions.laplace import _laplace_cdf, _laplace_icdf
from dbr.functions.distributions.multivariate_normal import _triangular_inv


def test_bernoulli_log_prob_broadcasts_logit_and_takes_raw_arrays():
    logit = numpy.array(0.3)
    x = numpy.array([0.0, 1.0, 1.0])
    y = _bernoulli_log_prob(logit, x)
    p = 1 / (1 + numpy.exp(-0.3))
    testing.assert_allclose(y.array, numpy.log([1 - p, p, p]), atol=1e-12, rtol=0)
    gy = numpy.array([0.5, -1.0, 2.0])
    check_backward(lambda v: _bernoulli_log_prob(v, x), numpy.array(0.3), gy)
    check_double_backward(
        lambda v: _bernoulli_log_prob(v, x), numpy.array(0.3), gy, numpy.array(0.7)
    )
    # Bernoulli.log_prob is this helper on the distribution's logit
    testing.assert_allclose(Bernoulli(logit=logit).log_prob(x).array, y.array, atol=0, rtol=0)


def test_bernoulli_log_prob_at_infinite_logits():
    logit = Variable(numpy.array([numpy.inf, -numpy.inf, numpy.inf]))
    x = numpy.array([1.0, 0.0, 0.0])
    with numpy.errstate(divide="ignore"):
        y = _bernoulli_log_prob(logit, x)
    testing.assert_allclose(y.array, [0.0, 0.0, -numpy.inf], atol=0, rtol=0)
    F.sum(y).backward()
    testing.assert_allclose(logit.grad, [0.0, 0.0, 0.0], atol=0, rtol=0)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("d", [3, 1, 0])
def test_triangular_inv_reads_one_triangle(lower, d):
    rng = numpy.random.default_rng(0)
    full = rng.normal(size=(d, d)) + 3 * numpy.eye(d)
    triangle = numpy.tril(full) if lower else numpy.triu(full)
    y = _triangular_inv(full, lower=lower)  # the other triangle is ignored
    testing.assert_allclose(y.array, numpy.linalg.inv(triangle), atol=1e-12, rtol=0)
    gy, ggx = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    check_backward(lambda m: _triangular_inv(m, lower=lower), triangle, gy)
    check_double_backward(lambda m: _triangular_inv(m, lower=lower), triangle, gy, ggx)


def test_laplace_helpers_are_the_standard_cdf_and_quantile():
    u = numpy.array([0.1, 0.5, 0.8])
    y = _laplace_icdf(u)
    expected = -numpy.sign(u - 0.5) * numpy.log(1 - 2 * numpy.abs(u - 0.5))
    testing.assert_allclose(y.array, expected, atol=1e-12, rtol=0)
    testing.assert_allclose(_laplace_cdf(y).array, u, atol=1e-12, rtol=0)
    check_backward(_laplace_cdf, numpy.array([-0.7, 0.4]), numpy.array([1.0, -2.0]))
    check_backward(_laplace_icdf, numpy.array([0.2, 0.9]), numpy.array([1.0, -2.0]))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_icdf_of_a_numpy_scalar_keeps_the_parameters_dtype(dtype):
    loc, scale = numpy.array(0.5, dtype), numpy.array(2.0, dtype)
    u = dtype(0.3)  # a NumPy scalar, not a 0-d array
    for dist in (Laplace(loc, scale), Cauchy(loc, scale)):
        y = dist.icdf(u)
        assert y.shape == () and y.dtype == dtype


def test_xlogx_warns_at_zero_on_backward():
    x = Variable(numpy.array([0.0, 0.5, 2.0]))
    y = xlogx(x)
    testing.assert_allclose(y.array, [0.0, 0.5 * numpy.log(0.5), 2 * numpy.log(2)], atol=1e-15)
    with pytest.warns(RuntimeWarning, match="xlogx: the gradient of x log x at x = 0 is -inf"):
        F.sum(y).backward()
    testing.assert_allclose(x.grad, [0.0, 1 + numpy.log(0.5), 1 + numpy.log(2)], atol=1e-15)
    x = Variable(numpy.array([0.5, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.sum(xlogx(x)).backward()
    check_double_backward(xlogx, numpy.array([0.3, 1.5]), numpy.ones(2), numpy.ones(2))


def test_poisson_log_prob_of_a_0d_float32_count_stays_float32():
    pytest.importorskip("scipy", reason='lgamma needs SciPy: pip install "dbr-functions[special]"')
    from dbr.functions.distributions import Poisson

    log_prob = Poisson(numpy.array(3.0, numpy.float32)).log_prob(numpy.array(2.0, numpy.float32))
    assert log_prob.dtype == numpy.float32
    numpy.testing.assert_allclose(log_prob.array, 2 * numpy.log(3.0) - numpy.log(2.0) - 3.0, 1e-6)
