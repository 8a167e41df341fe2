"""dbr.functions.distributions against closed-form formulas, numerical gradients and sampling.

References are computed here: the density, moments and entropy of each family
written out with NumPy and ``math`` (SciPy's ``scipy.stats`` for the families
that need the special extra anyway), KL divergences by exact sums or by Monte
Carlo, and statistics of a few thousand samples drawn with a fixed seed.
"""

import math

import numpy
import pytest

import dbr.functions as F
import dbr.functions.distributions as D
from dbr.core import Variable
from dbr.core.gradient_check import check_backward

try:
    import scipy.special  # noqa: F401
    import scipy.stats

    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False

needs_scipy = pytest.mark.skipif(not HAVE_SCIPY, reason="needs dbr-functions[special] (SciPy)")
EULER = 0.5772156649015329

rng = numpy.random.RandomState(7)


def u(lo, hi, shape=(3,)):
    return rng.uniform(lo, hi, shape)


def simplex(shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(axis=-1, keepdims=True)


def tril(batch, d):
    a = numpy.tril(rng.uniform(-0.5, 0.5, batch + (d, d)))
    i = numpy.arange(d)
    a[..., i, i] = rng.uniform(0.5, 1.5, batch + (d,))
    return a


def mvn(batch):
    return D.MultivariateNormal(u(-1, 1, batch + (3,)), scale_tril=tril(batch, 3))


def _erf(x):
    return numpy.vectorize(math.erf)(x)


# --------------------------------------------------------------------------- formulas


def test_normal_formulas():
    loc, scale, x = u(-1, 1), u(0.5, 2), u(-2, 2)
    d = D.Normal(loc, scale)
    z = (x - loc) / scale
    numpy.testing.assert_allclose(
        d.log_prob(x).array, -0.5 * z**2 - numpy.log(scale) - 0.5 * math.log(2 * math.pi)
    )
    numpy.testing.assert_allclose(
        d.prob(x).array, numpy.exp(-0.5 * z**2) / scale / math.sqrt(2 * math.pi)
    )
    numpy.testing.assert_allclose(
        d.entropy.array, 0.5 * numpy.log(2 * math.pi * math.e * scale**2)
    )
    numpy.testing.assert_allclose(d.mean.array, loc)
    numpy.testing.assert_allclose(d.variance.array, scale**2)
    numpy.testing.assert_allclose(d.stddev.array, scale)
    assert d.batch_shape == (3,) and d.event_shape == () and d.support == "real"
    assert set(d.params) == {"loc", "scale"}
    d2 = D.Normal(loc, log_scale=numpy.log(scale))
    numpy.testing.assert_allclose(d2.scale.array, scale)
    numpy.testing.assert_allclose(d2.log_prob(x).array, d.log_prob(x).array)


@needs_scipy
def test_normal_cdf_family():
    loc, scale, x = u(-1, 1), u(0.5, 2), u(-2, 2)
    d = D.Normal(loc, scale)
    cdf = 0.5 * (1 + _erf((x - loc) / (scale * math.sqrt(2))))
    numpy.testing.assert_allclose(d.cdf(x).array, cdf)
    numpy.testing.assert_allclose(d.log_cdf(x).array, numpy.log(cdf))
    numpy.testing.assert_allclose(d.survival_function(x).array, 1 - cdf)
    numpy.testing.assert_allclose(d.log_survival_function(x).array, numpy.log1p(-cdf))
    numpy.testing.assert_allclose(d.icdf(cdf).array, x)


def test_bernoulli_formulas():
    p = numpy.array([0.2, 0.5, 0.9])
    d = D.Bernoulli(p)
    for x in (numpy.zeros(3), numpy.ones(3)):
        ref = numpy.log(numpy.where(x == 1, p, 1 - p))
        numpy.testing.assert_allclose(d.log_prob(x).array, ref)
        numpy.testing.assert_allclose(d.prob(x).array, numpy.exp(ref))
    numpy.testing.assert_allclose(d.entropy.array, -p * numpy.log(p) - (1 - p) * numpy.log(1 - p))
    numpy.testing.assert_allclose(d.mean.array, p)
    numpy.testing.assert_allclose(d.variance.array, p * (1 - p))
    numpy.testing.assert_allclose(d.stddev.array, numpy.sqrt(p * (1 - p)))
    logit = numpy.log(p / (1 - p))
    numpy.testing.assert_allclose(D.Bernoulli(logit=logit).p.array, p)
    numpy.testing.assert_allclose(d.logit.array, logit)
    assert d.support == "{0, 1}" and set(d.params) == {"logit"}


def test_bernoulli_edges():
    d = D.Bernoulli(numpy.array([0.0, 1.0]))
    numpy.testing.assert_array_equal(d.entropy.array, [0.0, 0.0])
    d = D.Bernoulli(logit=numpy.array([numpy.inf, -numpy.inf]))
    numpy.testing.assert_array_equal(d.log_prob(numpy.array([1.0, 0.0])).array, [0.0, 0.0])
    numpy.testing.assert_array_equal(
        d.log_prob(numpy.array([0.0, 1.0])).array, [-numpy.inf, -numpy.inf]
    )
    d = D.Bernoulli(numpy.array([0.3, 0.3]), binary_check=True)
    assert d.log_prob(numpy.array([0.5, 1.0])).array[0] == -numpy.inf
    numpy.testing.assert_allclose(d.prob(numpy.array([0.5, 1.0])).array, [0.0, 0.3])


def test_categorical_formulas():
    p = simplex((2, 4))
    d = D.Categorical(p)
    x = numpy.array([[1, 3], [0, 2], [3, 3]])
    ref = numpy.log(p[numpy.arange(2), x])
    numpy.testing.assert_allclose(d.log_prob(x).array, ref)
    numpy.testing.assert_allclose(d.entropy.array, -(p * numpy.log(p)).sum(-1))
    assert d.batch_shape == (2,) and d.event_shape == ()
    logit = rng.uniform(-2, 2, (2, 4))
    soft = numpy.exp(logit) / numpy.exp(logit).sum(-1, keepdims=True)
    numpy.testing.assert_allclose(D.Categorical(logit=logit).p.array, soft)
    numpy.testing.assert_allclose(
        D.Categorical(logit=logit).log_prob(x).array, numpy.log(soft[numpy.arange(2), x])
    )


def test_one_hot_categorical_formulas():
    p = simplex((2, 4))
    d = D.OneHotCategorical(p)
    idx = numpy.array([[1, 3], [0, 2]])
    x = numpy.eye(4)[idx]
    numpy.testing.assert_allclose(d.log_prob(x).array, numpy.log(p[numpy.arange(2), idx]))
    numpy.testing.assert_allclose(d.mean.array, p)
    numpy.testing.assert_allclose(d.variance.array, p * (1 - p))
    numpy.testing.assert_allclose(d.entropy.array, -(p * numpy.log(p)).sum(-1))
    assert d.batch_shape == (2,) and d.event_shape == (4,)


def test_uniform_formulas():
    low, high = u(-2, -1), u(1, 2)
    x = numpy.array([-3.0, 0.0, 3.0])
    for d in (D.Uniform(low=low, high=high), D.Uniform(loc=low, scale=high - low)):
        inside = (x >= low) & (x <= high)
        numpy.testing.assert_allclose(
            d.log_prob(x).array, numpy.where(inside, -numpy.log(high - low), -numpy.inf)
        )
        numpy.testing.assert_allclose(d.prob(x).array, numpy.where(inside, 1 / (high - low), 0))
        numpy.testing.assert_allclose(d.cdf(x).array, numpy.clip((x - low) / (high - low), 0, 1))
        numpy.testing.assert_allclose(d.icdf(numpy.full(3, 0.25)).array, low + 0.25 * (high - low))
        numpy.testing.assert_allclose(d.entropy.array, numpy.log(high - low))
        numpy.testing.assert_allclose(d.mean.array, (low + high) / 2)
        numpy.testing.assert_allclose(d.variance.array, (high - low) ** 2 / 12)
        numpy.testing.assert_allclose(d.low.array, low)
        numpy.testing.assert_allclose(d.high.array, high)
    assert set(D.Uniform(low=low, high=high).params) == {"low", "high"}
    assert set(D.Uniform(loc=low, scale=high).params) == {"loc", "scale"}


def test_exponential_formulas():
    lam, x = u(0.5, 2), numpy.array([-1.0, 0.5, 2.0])
    d = D.Exponential(lam)
    numpy.testing.assert_allclose(
        d.log_prob(x).array, numpy.where(x >= 0, numpy.log(lam) - lam * x, -numpy.inf)
    )
    x = numpy.abs(x)
    numpy.testing.assert_allclose(d.cdf(x).array, 1 - numpy.exp(-lam * x))
    numpy.testing.assert_allclose(d.survival_function(x).array, numpy.exp(-lam * x))
    numpy.testing.assert_allclose(d.icdf(numpy.full(3, 0.5)).array, math.log(2) / lam)
    numpy.testing.assert_allclose(d.entropy.array, 1 - numpy.log(lam))
    numpy.testing.assert_allclose(d.mean.array, 1 / lam)
    numpy.testing.assert_allclose(d.variance.array, 1 / lam**2)


def test_log_normal_formulas():
    mu, sigma, x = u(-1, 1), u(0.5, 1.5), u(0.1, 3)
    d = D.LogNormal(mu, sigma)
    ref = -numpy.log(x * sigma * math.sqrt(2 * math.pi)) - (numpy.log(x) - mu) ** 2 / (
        2 * sigma**2
    )
    numpy.testing.assert_allclose(d.log_prob(x).array, ref)
    numpy.testing.assert_allclose(
        d.entropy.array, mu + 0.5 + numpy.log(sigma) + 0.5 * math.log(2 * math.pi)
    )
    numpy.testing.assert_allclose(d.mean.array, numpy.exp(mu + sigma**2 / 2))
    numpy.testing.assert_allclose(
        d.variance.array, (numpy.exp(sigma**2) - 1) * numpy.exp(2 * mu + sigma**2)
    )


def test_laplace_formulas():
    loc, scale, x = u(-1, 1), u(0.5, 2), numpy.array([-2.0, 0.1, 2.0])
    d = D.Laplace(loc, scale)
    numpy.testing.assert_allclose(
        d.log_prob(x).array, -numpy.log(2 * scale) - numpy.abs(x - loc) / scale
    )
    numpy.testing.assert_allclose(
        d.prob(x).array, numpy.exp(-numpy.abs(x - loc) / scale) / (2 * scale)
    )
    cdf = numpy.where(
        x < loc, 0.5 * numpy.exp((x - loc) / scale), 1 - 0.5 * numpy.exp(-(x - loc) / scale)
    )
    numpy.testing.assert_allclose(d.cdf(x).array, cdf)
    numpy.testing.assert_allclose(d.icdf(cdf).array, x)
    numpy.testing.assert_allclose(d.entropy.array, 1 + numpy.log(2 * scale))
    numpy.testing.assert_allclose(d.mean.array, loc)
    numpy.testing.assert_allclose(d.mode.array, loc)
    numpy.testing.assert_allclose(d.variance.array, 2 * scale**2)
    numpy.testing.assert_allclose(d.stddev.array, math.sqrt(2) * scale)


def test_gumbel_formulas():
    loc, scale, x = u(-1, 1), u(0.5, 2), u(-2, 2)
    d = D.Gumbel(loc, scale)
    z = (x - loc) / scale
    numpy.testing.assert_allclose(d.log_prob(x).array, -numpy.log(scale) - z - numpy.exp(-z))
    numpy.testing.assert_allclose(d.entropy.array, numpy.log(scale) + EULER + 1)
    numpy.testing.assert_allclose(d.mean.array, loc + EULER * scale)
    numpy.testing.assert_allclose(d.variance.array, math.pi**2 / 6 * scale**2)


def test_geometric_formulas():
    p, x = u(0.2, 0.8), numpy.array([1.0, 2.0, 5.0])
    d = D.Geometric(p)
    numpy.testing.assert_allclose(d.log_prob(x).array, numpy.log((1 - p) ** (x - 1) * p))
    numpy.testing.assert_allclose(d.log_prob(x.astype(numpy.int64)).array, d.log_prob(x).array)
    numpy.testing.assert_allclose(d.mean.array, 1 / p)
    numpy.testing.assert_allclose(d.variance.array, (1 - p) / p**2)


def test_cauchy_formulas():
    loc, scale, x = u(-1, 1), u(0.5, 2), u(-2, 2)
    d = D.Cauchy(loc, scale)
    numpy.testing.assert_allclose(
        d.log_prob(x).array, numpy.log(scale / (math.pi * ((x - loc) ** 2 + scale**2)))
    )
    cdf = numpy.arctan((x - loc) / scale) / math.pi + 0.5
    numpy.testing.assert_allclose(d.cdf(x).array, cdf)
    numpy.testing.assert_allclose(d.icdf(cdf).array, x)
    numpy.testing.assert_allclose(d.entropy.array, numpy.log(4 * math.pi * scale))
    with pytest.warns(RuntimeWarning, match="Mean of the Cauchy"):
        assert numpy.isnan(d.mean.array).all()
    with pytest.warns(RuntimeWarning, match="Variance of the Cauchy"):
        assert numpy.isnan(d.variance.array).all()


def test_pareto_formulas():
    scale, alpha = u(0.5, 1), numpy.array([0.5, 1.5, 3.0])
    x = numpy.array([0.1, 1.5, 3.0])
    d = D.Pareto(scale, alpha)
    ref = numpy.where(
        x >= scale,
        numpy.log(alpha) + alpha * numpy.log(scale) - (alpha + 1) * numpy.log(x),
        -numpy.inf,
    )
    numpy.testing.assert_allclose(d.log_prob(x).array, ref)
    numpy.testing.assert_allclose(d.entropy.array, numpy.log(scale / alpha) + 1 / alpha + 1)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        mean = numpy.where(alpha > 1, alpha * scale / (alpha - 1), numpy.inf)
        var = numpy.where(
            alpha > 2, scale**2 * alpha / ((alpha - 1) ** 2 * (alpha - 2)), numpy.inf
        )
    numpy.testing.assert_allclose(d.mean.array, mean)
    numpy.testing.assert_allclose(d.variance.array, var)


def test_multivariate_normal_formulas():
    loc, scale_tril = u(-1, 1, (2, 3)), tril((2,), 3)
    x = u(-2, 2, (4, 2, 3))
    d = D.MultivariateNormal(loc, scale_tril=scale_tril)
    cov = scale_tril @ numpy.swapaxes(scale_tril, -1, -2)
    diff = x - loc
    maha = numpy.einsum("sbi,bij,sbj->sb", diff, numpy.linalg.inv(cov), diff)
    logdet = numpy.linalg.slogdet(cov)[1]
    ref = -0.5 * (maha + logdet + 3 * math.log(2 * math.pi))
    numpy.testing.assert_allclose(d.log_prob(x).array, ref)
    numpy.testing.assert_allclose(
        d.entropy.array, 0.5 * logdet + 1.5 * math.log(2 * math.pi * math.e)
    )
    numpy.testing.assert_allclose(d.covariance.array, cov)
    numpy.testing.assert_allclose(d.variance.array, numpy.diagonal(cov, axis1=-2, axis2=-1))
    numpy.testing.assert_allclose(d.mean.array, loc)
    assert d.batch_shape == (2,) and d.event_shape == (3,) and d.d == 3
    upper = scale_tril + numpy.triu(numpy.ones((3, 3)), 1)  # the upper triangle is never read
    numpy.testing.assert_allclose(
        D.MultivariateNormal(loc, scale_tril=upper).log_prob(x).array, ref
    )


@needs_scipy
@pytest.mark.parametrize(
    "name, make, frozen, x",
    [
        ("Gamma", lambda: D.Gamma(numpy.array([0.5, 1.5, 3.0]), numpy.array([2.0, 0.5, 1.0])),
         lambda: scipy.stats.gamma([0.5, 1.5, 3.0], scale=[2.0, 0.5, 1.0]),
         numpy.array([0.3, 1.0, 2.5])),
        ("Beta", lambda: D.Beta(numpy.array([0.5, 2.0, 3.0]), numpy.array([2.0, 0.7, 3.0])),
         lambda: scipy.stats.beta([0.5, 2.0, 3.0], [2.0, 0.7, 3.0]),
         numpy.array([0.3, 0.6, 0.9])),
        ("Chisquare", lambda: D.Chisquare(numpy.array([1.0, 2.5, 6.0])),
         lambda: scipy.stats.chi2([1.0, 2.5, 6.0]), numpy.array([0.3, 1.0, 5.0])),
        ("Poisson", lambda: D.Poisson(numpy.array([0.5, 2.0, 7.0])),
         lambda: scipy.stats.poisson([0.5, 2.0, 7.0]), numpy.array([0.0, 3.0, 6.0])),
    ],
)  # fmt: skip
def test_special_families_against_scipy_stats(name, make, frozen, x):
    d, ref = make(), frozen()
    if name == "Poisson":
        numpy.testing.assert_allclose(d.log_prob(x).array, ref.logpmf(x))
    else:
        numpy.testing.assert_allclose(d.log_prob(x).array, ref.logpdf(x))
        numpy.testing.assert_allclose(d.entropy.array, ref.entropy())
    numpy.testing.assert_allclose(d.mean.array, ref.mean())
    numpy.testing.assert_allclose(d.variance.array, ref.var())


@needs_scipy
def test_gamma_and_beta_outside_support():
    assert (
        D.Gamma(numpy.ones(1), numpy.ones(1)).log_prob(numpy.array([-1.0])).array[0] == -numpy.inf
    )
    lp = D.Beta(numpy.full(2, 2.0), numpy.full(2, 2.0)).log_prob(numpy.array([-0.5, 1.5])).array
    numpy.testing.assert_array_equal(lp, [-numpy.inf, -numpy.inf])


@needs_scipy
def test_dirichlet_against_scipy_stats():
    alpha = u(0.5, 3, (2, 4))
    x = simplex((3, 2, 4))
    d = D.Dirichlet(alpha)
    for b in range(2):
        ref = scipy.stats.dirichlet(alpha[b])
        numpy.testing.assert_allclose(
            d.log_prob(x).array[:, b], [ref.logpdf(xi) for xi in x[:, b]]
        )
        numpy.testing.assert_allclose(d.entropy.array[b], ref.entropy())
        numpy.testing.assert_allclose(d.mean.array[b], ref.mean())
        numpy.testing.assert_allclose(d.variance.array[b], ref.var())
    assert d.batch_shape == (2,) and d.event_shape == (4,)


def test_float32_parameters_keep_their_dtype():
    loc = numpy.zeros(3, numpy.float32)
    scale = numpy.ones(3, numpy.float32)
    for d in (D.Normal(loc, scale), D.Laplace(loc, scale), D.Gumbel(loc, scale),
              D.Uniform(low=loc, high=scale), D.Exponential(scale), D.LogNormal(loc, scale),
              D.Cauchy(loc, scale)):  # fmt: skip
        assert d.sample(5).dtype == numpy.float32, type(d).__name__
        assert d.log_prob(scale).dtype == numpy.float32, type(d).__name__


def test_parameters_broadcast():
    d = D.Normal(numpy.zeros((2, 1)), numpy.ones(3))
    assert d.batch_shape == (2, 3)
    assert d.sample(4).shape == (4, 2, 3)
    assert d.mean.shape == (2, 3) and d.entropy.shape == (2, 3)


# --------------------------------------------------------------------------- gradients


def _grad_check(f, inputs, **kw):
    outs = f(*[Variable(a) for a in inputs])
    check_backward(
        f, inputs, rng.standard_normal(outs.shape), eps=1e-6, atol=1e-7, rtol=1e-5, **kw
    )


REPARAMETERISED = [
    ("Normal", lambda a, b: D.Normal(a, b), (u(-1, 1), u(0.5, 2))),
    ("Normal_log_scale", lambda a, b: D.Normal(a, log_scale=b), (u(-1, 1), u(-0.5, 0.5))),
    ("LogNormal", lambda a, b: D.LogNormal(a, b), (u(-1, 1), u(0.5, 1.5))),
    ("Laplace", lambda a, b: D.Laplace(a, b), (u(-1, 1), u(0.5, 2))),
    ("Gumbel", lambda a, b: D.Gumbel(a, b), (u(-1, 1), u(0.5, 2))),
    ("Uniform", lambda a, b: D.Uniform(low=a, high=b), (u(-2, -1), u(1, 2))),
    ("Uniform_loc_scale", lambda a, b: D.Uniform(loc=a, scale=b), (u(-2, -1), u(1, 2))),
    ("Cauchy", lambda a, b: D.Cauchy(a, b), (u(-1, 1), u(0.5, 2))),
    ("Exponential", lambda a: D.Exponential(a), (u(0.5, 2),)),
    ("MultivariateNormal", lambda a, b: D.MultivariateNormal(a, scale_tril=b),
     (u(-1, 1, (2, 3)), tril((2,), 3))),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, make, params", REPARAMETERISED, ids=[r[0] for r in REPARAMETERISED]
)
def test_reparameterised_sample_gradient(name, make, params):
    def f(*ps):
        numpy.random.seed(3)
        return make(*ps).sample(4)

    _grad_check(f, params)


LOG_PROB_GRADS = REPARAMETERISED + [
    ("Bernoulli", lambda a: D.Bernoulli(a), (u(0.2, 0.8),)),
    ("Bernoulli_logit", lambda a: D.Bernoulli(logit=a), (u(-2, 2),)),
    ("Categorical", lambda a: D.Categorical(a), (simplex((2, 4)),)),
    ("Categorical_logit", lambda a: D.Categorical(logit=a), (u(-2, 2, (2, 4)),)),
    ("OneHotCategorical", lambda a: D.OneHotCategorical(a), (simplex((2, 4)),)),
    ("Geometric", lambda a: D.Geometric(a), (u(0.2, 0.8),)),
    ("Pareto", lambda a, b: D.Pareto(a, b), (u(0.2, 0.4), u(2.5, 4))),
]
SCIPY_GRADS = [
    ("Gamma", lambda a, b: D.Gamma(a, b), (u(0.5, 3), u(0.5, 2))),
    ("Beta", lambda a, b: D.Beta(a, b), (u(0.5, 3), u(0.5, 3))),
    ("Dirichlet", lambda a: D.Dirichlet(a), (u(0.5, 3, (2, 4)),)),
    ("Chisquare", lambda a: D.Chisquare(a), (u(1, 5),)),
    ("Poisson", lambda a: D.Poisson(a), (u(0.5, 4),)),
]


def _points(dist):
    numpy.random.seed(11)
    x = dist.sample(2).array
    if isinstance(dist, D.Uniform):
        x = dist.icdf(numpy.random.uniform(0.1, 0.9, x.shape)).array  # away from the edges
    return x


@pytest.mark.parametrize(
    "name, make, params",
    LOG_PROB_GRADS + [pytest.param(*s, marks=needs_scipy) for s in SCIPY_GRADS],
    ids=[r[0] for r in LOG_PROB_GRADS + SCIPY_GRADS],
)
def test_log_prob_and_statistics_gradients(name, make, params):
    x = _points(make(*params))
    _grad_check(lambda *ps: make(*ps).log_prob(x), params)
    for stat in ("entropy", "mean", "variance"):
        if name == "Cauchy" and stat != "entropy":
            continue  # undefined (NaN)
        try:
            getattr(make(*params), stat)
        except NotImplementedError:
            continue
        _grad_check(lambda *ps, stat=stat: getattr(make(*ps), stat), params)


def test_log_prob_gradient_wrt_x():
    loc, scale, x = u(-1, 1), u(0.5, 2), u(-2, 2)
    _grad_check(lambda x: D.Normal(loc, scale).log_prob(x), (x,))
    scale_tril = tril((), 3)
    _grad_check(
        lambda x: D.MultivariateNormal(loc, scale_tril=scale_tril).log_prob(x),
        (u(-1, 1, (2, 3)),),
    )


def test_scale_tril_gradient_stays_lower():
    loc, scale_tril = Variable(u(-1, 1, (3,))), Variable(tril((), 3))
    F.sum(D.MultivariateNormal(loc, scale_tril=scale_tril).log_prob(u(-1, 1, (3,)))).backward()
    numpy.testing.assert_array_equal(numpy.triu(scale_tril.grad, 1), 0)


# --------------------------------------------------------------------------- sampling

N = 20000


def _check_moments(d, samples):
    m, v = d.mean.array, d.variance.array
    mean = samples.mean(axis=0)
    var = samples.var(axis=0)
    # five standard errors of the sample mean; the variance within 10 % plus a margin
    numpy.testing.assert_array_less(numpy.abs(mean - m), 5 * numpy.sqrt(v / N) + 1e-12)
    numpy.testing.assert_allclose(var, v, rtol=0.1, atol=1e-3)


SAMPLED = [
    ("Normal", lambda: D.Normal(u(-1, 1), u(0.5, 2)), lambda s: True),
    ("LogNormal", lambda: D.LogNormal(u(-0.5, 0.5), u(0.2, 0.5)), lambda s: (s > 0).all()),
    ("Laplace", lambda: D.Laplace(u(-1, 1), u(0.5, 2)), lambda s: True),
    ("Gumbel", lambda: D.Gumbel(u(-1, 1), u(0.5, 2)), lambda s: True),
    ("Uniform", lambda: D.Uniform(low=numpy.array([-2.0, 0.0]), high=numpy.array([1.0, 0.5])),
     lambda s: ((s >= [-2, 0]) & (s <= [1, 0.5])).all()),
    ("Exponential", lambda: D.Exponential(u(0.5, 2)), lambda s: (s >= 0).all()),
    ("Bernoulli", lambda: D.Bernoulli(u(0.2, 0.8)), lambda s: numpy.isin(s, [0, 1]).all()),
    ("Geometric", lambda: D.Geometric(u(0.3, 0.8)),
     lambda s: (s >= 1).all() and (s == numpy.round(s)).all()),
    ("Pareto", lambda: D.Pareto(numpy.array([0.5, 1.0]), numpy.array([5.0, 6.0])),
     lambda s: (s >= [0.5, 1.0]).all()),
    ("OneHotCategorical", lambda: D.OneHotCategorical(simplex((2, 3))),
     lambda s: (s.sum(-1) == 1).all() and numpy.isin(s, [0, 1]).all()),
    ("MultivariateNormal", lambda: mvn((2,)), lambda s: True),
]  # fmt: skip
SCIPY_SAMPLED = [
    ("Gamma", lambda: D.Gamma(u(0.5, 3), u(0.5, 2)), lambda s: (s > 0).all()),
    ("Beta", lambda: D.Beta(u(0.5, 3), u(0.5, 3)), lambda s: ((s >= 0) & (s <= 1)).all()),
    ("Chisquare", lambda: D.Chisquare(u(1, 5)), lambda s: (s > 0).all()),
    ("Poisson", lambda: D.Poisson(u(0.5, 4)), lambda s: (s == numpy.round(s)).all()),
    ("Dirichlet", lambda: D.Dirichlet(u(0.5, 3, (2, 4))),
     lambda s: numpy.allclose(s.sum(-1), 1) and (s >= 0).all()),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, make, in_support",
    SAMPLED + [pytest.param(*s, marks=needs_scipy) for s in SCIPY_SAMPLED],
    ids=[r[0] for r in SAMPLED + SCIPY_SAMPLED],
)
def test_sample_moments_and_support(name, make, in_support):
    d = make()
    numpy.random.seed(5)
    samples = d.sample(N).array
    assert samples.shape == (N,) + d.batch_shape + d.event_shape
    assert in_support(samples)
    if name == "MultivariateNormal":
        centred = samples - samples.mean(0)
        cov = numpy.einsum("nbi,nbj->bij", centred, centred) / N
        numpy.testing.assert_allclose(cov, d.covariance.array, atol=0.05)
        numpy.testing.assert_allclose(samples.mean(0), d.mean.array, atol=0.05)
    else:
        _check_moments(d, samples)


def test_categorical_sample_frequencies():
    p = numpy.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    numpy.random.seed(5)
    s = D.Categorical(p).sample(N).array
    assert s.shape == (N, 2) and s.dtype.kind == "i"
    freq = numpy.stack([(s == k).mean(0) for k in range(3)], -1)
    numpy.testing.assert_allclose(freq, p, atol=0.015)


def test_cauchy_sample_quantiles():
    d = D.Cauchy(numpy.array([0.5]), numpy.array([2.0]))
    numpy.random.seed(5)
    s = d.sample(N).array[:, 0]
    numpy.testing.assert_allclose(numpy.quantile(s, [0.25, 0.5, 0.75]), [-1.5, 0.5, 2.5], atol=0.1)


def test_sample_shapes():
    d = D.Normal(numpy.zeros((2, 3)), numpy.ones((2, 3)))
    assert d.sample().shape == (2, 3)
    assert d.sample(4).shape == (4, 2, 3)
    assert d.sample((4, 5)).shape == (4, 5, 2, 3)
    assert d.sample_n(6).shape == (6, 2, 3)


# --------------------------------------------------------------------------- KL divergences


def _mc_kl(p, q, n=200000):
    numpy.random.seed(9)
    x = p.sample(n).array
    lr = p.log_prob(x).array - q.log_prob(x).array
    return lr.mean(0), lr.std(0) / math.sqrt(n)


MC_KL = [
    ("Normal", lambda: D.Normal(u(-1, 1), u(0.5, 2)), lambda: D.Normal(u(-1, 1), u(0.5, 2))),
    ("LogNormal", lambda: D.LogNormal(u(-1, 1), u(0.5, 1)),
     lambda: D.LogNormal(u(-1, 1), u(0.5, 1))),
    ("Laplace", lambda: D.Laplace(u(-1, 1), u(0.5, 2)), lambda: D.Laplace(u(-1, 1), u(0.5, 2))),
    ("Gumbel", lambda: D.Gumbel(u(-1, 1), u(0.5, 2)), lambda: D.Gumbel(u(-1, 1), u(0.5, 2))),
    ("Exponential", lambda: D.Exponential(u(0.5, 2)), lambda: D.Exponential(u(0.5, 2))),
    ("Uniform", lambda: D.Uniform(low=u(-1, 0), high=u(0, 1)),
     lambda: D.Uniform(low=u(-3, -2), high=u(2, 3))),
    ("Pareto", lambda: D.Pareto(u(1, 2), u(3, 4)), lambda: D.Pareto(u(0.5, 0.9), u(1, 3))),
    ("MultivariateNormal", lambda: mvn((2,)), lambda: mvn((2,))),
]  # fmt: skip
SCIPY_MC_KL = [
    ("Gamma", lambda: D.Gamma(u(1, 3), u(0.5, 2)), lambda: D.Gamma(u(1, 3), u(0.5, 2))),
    ("Beta", lambda: D.Beta(u(1, 3), u(1, 3)), lambda: D.Beta(u(1, 3), u(1, 3))),
    ("Dirichlet", lambda: D.Dirichlet(u(1, 3, (2, 4))), lambda: D.Dirichlet(u(1, 3, (2, 4)))),
]


@pytest.mark.parametrize(
    "name, make_p, make_q",
    MC_KL + [pytest.param(*s, marks=needs_scipy) for s in SCIPY_MC_KL],
    ids=[r[0] for r in MC_KL + SCIPY_MC_KL],
)
def test_kl_divergence_against_monte_carlo(name, make_p, make_q):
    if name == "Gumbel":
        pytest.importorskip("scipy.special", reason="Gumbel's KL needs lgamma")
    p, q = make_p(), make_q()
    kl = D.kl_divergence(p, q).array
    estimate, se = _mc_kl(p, q)
    numpy.testing.assert_array_less(numpy.abs(kl - estimate), 5 * se + 1e-3)


def test_uniform_kl_is_infinite_outside_support():
    p = D.Uniform(low=numpy.array([-1.0]), high=numpy.array([2.0]))
    q = D.Uniform(low=numpy.array([0.0]), high=numpy.array([3.0]))
    assert D.kl_divergence(p, q).array[0] == numpy.inf


def test_discrete_kl_divergences_against_exact_sums():
    p, q = u(0.1, 0.9), u(0.1, 0.9)
    ref = p * numpy.log(p / q) + (1 - p) * numpy.log((1 - p) / (1 - q))
    numpy.testing.assert_allclose(D.kl_divergence(D.Bernoulli(p), D.Bernoulli(q)).array, ref)
    pc, qc = simplex((2, 4)), simplex((2, 4))
    ref = (pc * numpy.log(pc / qc)).sum(-1)
    numpy.testing.assert_allclose(D.kl_divergence(D.Categorical(pc), D.Categorical(qc)).array, ref)
    numpy.testing.assert_allclose(
        D.kl_divergence(D.OneHotCategorical(pc), D.OneHotCategorical(qc)).array, ref
    )
    k = numpy.arange(1, 400)[:, None]
    pg, qg = u(0.2, 0.8), u(0.2, 0.8)
    lp = (k - 1) * numpy.log(1 - pg) + numpy.log(pg)
    lq = (k - 1) * numpy.log(1 - qg) + numpy.log(qg)
    numpy.testing.assert_allclose(
        D.kl_divergence(D.Geometric(pg), D.Geometric(qg)).array, (numpy.exp(lp) * (lp - lq)).sum(0)
    )


@needs_scipy
def test_poisson_kl_against_exact_sum():
    lp, lq = u(0.5, 4), u(0.5, 4)
    k = numpy.arange(0, 100)[:, None]
    logp = scipy.stats.poisson.logpmf(k, lp)
    logq = scipy.stats.poisson.logpmf(k, lq)
    numpy.testing.assert_allclose(
        D.kl_divergence(D.Poisson(lp), D.Poisson(lq)).array,
        (numpy.exp(logp) * (logp - logq)).sum(0),
    )


def test_kl_divergence_gradient():
    _grad_check(
        lambda a, b, c, d: D.kl_divergence(D.Normal(a, b), D.Normal(c, d)),
        (u(-1, 1), u(0.5, 2), u(-1, 1), u(0.5, 2)),
    )
    _grad_check(
        lambda a, b, c, d: D.kl_divergence(
            D.MultivariateNormal(a, scale_tril=b), D.MultivariateNormal(c, scale_tril=d)
        ),
        (u(-1, 1, (2, 3)), tril((2,), 3), u(-1, 1, (2, 3)), tril((2,), 3)),
    )
