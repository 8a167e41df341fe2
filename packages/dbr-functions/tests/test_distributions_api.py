"""dbr.functions.distributions: the module, the base class, the KL registry and bad arguments."""

import subprocess
import sys

import numpy
import pytest

import dbr.functions.distributions as D
from dbr.core import Variable
from dbr.core.testing import bad_input_test

ALL = [
    "Bernoulli", "Beta", "Categorical", "Cauchy", "Chisquare", "Dirichlet", "Exponential",
    "Gamma", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal",
    "MultivariateNormal", "Normal", "OneHotCategorical", "Pareto", "Poisson", "Uniform",
]  # fmt: skip


def test_module_exports_chainer_names():
    for name in ALL + ["Distribution", "kl_divergence", "register_kl", "cross_entropy"]:
        assert name in D.__all__ and hasattr(D, name), name
    for name in ALL:
        assert issubclass(getattr(D, name), D.Distribution)


def test_distributions_are_imported_lazily_from_F():
    code = (
        "import sys, dbr.functions as F\n"
        "assert 'dbr.functions.distributions' not in sys.modules\n"
        "assert F.distributions.Normal.__name__ == 'Normal'\n"
        "import dbr.functions.distributions as D\n"
        "assert D is F.distributions\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    import dbr.functions as F

    with pytest.raises(AttributeError, match="no_such_name"):
        F.no_such_name  # noqa: B018


def test_register_kl_and_kl_divergence():
    class Point(D.Distribution):
        pass

    class Other(D.Distribution):
        pass

    @D.register_kl(Point, Point)
    def kl_point(p, q):
        return "kl"

    assert kl_point(None, None) == "kl"  # the decorator returns the function
    assert D.kl_divergence(Point(), Point()) == "kl"
    with pytest.raises(NotImplementedError, match="between Point and Other"):
        D.kl_divergence(Point(), Other())
    with pytest.raises(TypeError, match="register_kl: Dist2 must be a Distribution subclass"):
        D.register_kl(Point, int)


def test_registered_kl_pairs_match_chainer():
    pairs = [
        "Bernoulli", "Beta", "Categorical", "Dirichlet", "Exponential", "Gamma", "Geometric",
        "Gumbel", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
        "OneHotCategorical", "Pareto", "Poisson", "Uniform",
    ]  # fmt: skip
    from dbr.functions.distributions.distribution import _KL_DIVERGENCE

    for name in pairs:
        cls = getattr(D, name)
        assert (cls, cls) in _KL_DIVERGENCE, name


def test_cross_entropy_is_entropy_plus_kl():
    p = D.Normal(numpy.array([0.0, 1.0]), numpy.array([1.0, 2.0]))
    q = D.Normal(numpy.array([1.0, 0.0]), numpy.array([0.5, 1.0]))
    numpy.testing.assert_allclose(
        D.cross_entropy(p, q).array, p.entropy.array + D.kl_divergence(p, q).array
    )


def test_parameters_keep_the_given_variables():
    loc = Variable(numpy.zeros(2))
    d = D.Normal(loc, numpy.ones(2))
    assert d.loc is loc and d.params["loc"] is loc
    assert d.xp is numpy


# A distribution that implements nothing, so that each member refuses naming the class.
POINT = type("Point", (D.Distribution,), {})()
INDEPENDENT_2_3 = D.Independent(D.Normal(numpy.zeros((2, 3)), numpy.ones((2, 3))))
INDEPENDENT_3_2 = D.Independent(D.Normal(numpy.zeros((3, 2)), numpy.ones((3, 2))))
NORMAL_2 = D.Normal(numpy.zeros(2), numpy.ones(2))

test_bad_input = bad_input_test(
    [
        (getattr, (POINT, prop), {}, NotImplementedError, f"Point does not implement {prop}")
        for prop in ("batch_shape", "event_shape", "entropy", "mean", "variance", "covariance")
    ]
    + [
        (
            getattr(type(POINT), method),
            (POINT, numpy.zeros(1)),
            {},
            NotImplementedError,
            f"Point does not implement {method}",
        )
        for method in ("log_prob", "cdf", "icdf", "prob", "survival_function", "perplexity")
    ]
    + [
        (make, (), {}, TypeError, message)
        for make, message in [
            (lambda: D.Normal(1.0, numpy.ones(2)), "Normal: loc must be a Variable or an array"),
            (
                lambda: D.Normal(numpy.zeros(2), numpy.ones(2, int)),
                ("Normal: scale must be ", "int64"),
            ),
            (
                lambda: D.Normal(numpy.zeros(2, "f"), numpy.ones(2)),
                "Normal: scale must have the dtyp",
            ),
            (lambda: D.Bernoulli([0.5]), "Bernoulli: p must be a Variable or an array"),
            (lambda: D.Categorical(logit=numpy.arange(3)), "Categorical: logit must be"),
            (lambda: D.Gamma(numpy.ones(2), "x"), "Gamma: theta must be"),
            (lambda: D.Beta(None, numpy.ones(2)), "Beta: a must be"),
            (lambda: D.Uniform(low=numpy.zeros(1), high=[1.0]), "Uniform: high must be"),
            (
                lambda: D.MultivariateNormal(numpy.zeros(2), scale_tril=numpy.eye(2, dtype="f")),
                "MultivariateNormal: scale_tril must have the dtype of loc",
            ),
            (
                lambda: D.Independent(object()),
                "Independent: distribution must be a Distribution",
            ),
            # The parameters after the first ones are keyword-only, as in Chainer.
            (lambda: D.Uniform(numpy.zeros(1), numpy.ones(1)), ("Uniform", "positional argument")),
            (
                lambda: D.Normal(numpy.zeros(1), None, numpy.zeros(1)),
                ("Normal", "positional argument"),
            ),
            (
                lambda: D.MultivariateNormal(numpy.zeros(2), numpy.eye(2)),
                ("MultivariateNormal", "positional argument"),
            ),
            (
                lambda: NORMAL_2.sample(2.5),
                "Normal.sample: sample_shape must be an int or a tuple",
            ),
        ]
    ]
    + [
        (make, (), {}, ValueError, message)
        for make, message in [
            (lambda: D.Normal(numpy.zeros(2)), "Normal: give exactly one of scale and log_scale"),
            (
                lambda: D.Normal(numpy.zeros(2), numpy.ones(2), log_scale=numpy.zeros(2)),
                "Normal: give exactly one of scale and log_scale",
            ),
            (
                lambda: D.Normal(numpy.zeros(2), numpy.ones(3)),
                "Normal: the parameter shapes do not broadcast: loc (2,), scale (3,)",
            ),
            (lambda: D.Bernoulli(), "Bernoulli: give exactly one of p and logit"),
            (
                lambda: D.Categorical(numpy.ones(2) / 2, logit=numpy.zeros(2)),
                "Categorical: give exactly one of p and logit",
            ),
            (lambda: D.Categorical(numpy.float64(1.0)), "Categorical: p must have a class axis"),
            (lambda: D.Dirichlet(numpy.ones(())), "Dirichlet: alpha must have an event axis"),
            (lambda: D.Uniform(low=numpy.zeros(1)), "Uniform: give either low and high, or loc"),
            (
                lambda: D.Uniform(low=numpy.zeros(1), high=numpy.ones(1), scale=numpy.ones(1)),
                "Uniform: give either low and high, or loc",
            ),
            (lambda: D.MultivariateNormal(numpy.zeros(2)), "MultivariateNormal: scale_tril must"),
            (
                lambda: D.MultivariateNormal(numpy.zeros(2), scale_tril=numpy.eye(3)),
                ("MultivariateNormal: loc must have shape ", "got loc (2,) and scale_tril (3, 3)"),
            ),
            (
                lambda: D.Independent(NORMAL_2, 2),
                ("Independent: reinterpreted_batch_ndims must be an int from 0 to ", "(1), got 2"),
            ),
            (lambda: NORMAL_2.sample((-1,)), "Normal.sample: sample_shape must not be negative"),
            (lambda: NORMAL_2.sample_n(-3), "Normal.sample_n: n must be a non-negative int"),
            (
                lambda: D.Categorical(numpy.full((2, 3), 1 / 3)).log_prob(numpy.zeros(3, int)),
                ("Categorical.log_prob: x must have shape ", "(2,)"),
            ),
            (
                lambda: D.kl_divergence(INDEPENDENT_2_3, INDEPENDENT_3_2),
                ("event shapes ", " differ"),
            ),
        ]
    ]
)


def test_independent_shapes_and_reductions():
    loc, scale = numpy.zeros((4, 2, 3)), numpy.ones((4, 2, 3))
    base = D.Normal(loc, scale)
    ind = D.Independent(base)
    assert ind.reinterpreted_batch_ndims == 2
    assert ind.batch_shape == (4,) and ind.event_shape == (2, 3)
    x = numpy.random.RandomState(0).standard_normal((5, 4, 2, 3))
    numpy.testing.assert_allclose(ind.log_prob(x).array, base.log_prob(x).array.sum(axis=(-2, -1)))
    numpy.testing.assert_allclose(ind.entropy.array, base.entropy.array.sum(axis=(-2, -1)))
    assert ind.sample(7).shape == (7, 4, 2, 3)
    assert ind.mean is base.mean and ind.params == base.params and ind.support == "real"
    same = D.Independent(base, 0)
    assert same.batch_shape == (4, 2, 3) and same.event_shape == ()
    numpy.testing.assert_allclose(same.log_prob(x).array, base.log_prob(x).array)
    with pytest.raises(RuntimeError, match="Independent.icdf"):
        ind.icdf(x)


def test_independent_covariance_is_block_diagonal():
    rng = numpy.random.RandomState(1)
    scale = rng.uniform(0.5, 2, (2, 3))
    ind = D.Independent(D.Normal(numpy.zeros((2, 3)), scale), 1)
    cov = ind.covariance.array
    assert cov.shape == (2, 3, 3)
    numpy.testing.assert_allclose(cov, numpy.stack([numpy.diag(s**2) for s in scale]))
    a = numpy.tril(rng.uniform(-0.5, 0.5, (2, 3, 3))) + numpy.eye(3)
    mvn = D.MultivariateNormal(rng.uniform(-1, 1, (2, 3)), scale_tril=a)
    cov = D.Independent(mvn, 1).covariance.array
    ref = numpy.zeros((6, 6))
    ref[:3, :3] = a[0] @ a[0].T
    ref[3:, 3:] = a[1] @ a[1].T
    numpy.testing.assert_allclose(cov, ref)
