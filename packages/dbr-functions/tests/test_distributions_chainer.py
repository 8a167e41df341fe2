"""dbr.functions.distributions against values computed by Chainer 7.8.1.

fixtures/distributions_chainer.npz was written by
fixtures/make_distributions_chainer.py: for every distribution, fixed
parameters and points, Chainer's log_prob, statistics, KL divergence and the
gradient of sum(log_prob) with respect to each parameter.
"""

import os
import warnings

import numpy
import pytest

import dbr.functions as F
import dbr.functions.distributions as D
from dbr.core import Variable

try:
    import scipy.special  # noqa: F401

    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False

_PATH = os.path.join(os.path.dirname(__file__), "fixtures", "distributions_chainer.npz")
with numpy.load(_PATH, allow_pickle=False) as _f:
    REF = dict(_f)

NAMES = [
    "Normal", "Bernoulli", "Categorical", "OneHotCategorical", "Uniform", "Exponential",
    "Gamma", "Beta", "Dirichlet", "LogNormal", "Laplace", "Gumbel", "Poisson", "Geometric",
    "Cauchy", "Chisquare", "Pareto", "MultivariateNormal",
]  # fmt: skip
CALLS = ("cdf", "log_cdf", "survival_function", "log_survival_function", "prob")
# lgamma, digamma and ndtr need the special extra (SciPy) on the CPU.
SCIPY_FAMILIES = {"Gamma", "Beta", "Dirichlet", "Chisquare", "Poisson"}
SCIPY_NORMAL_STATS = {"cdf", "log_cdf", "icdf", "survival_function", "log_survival_function"}


def _require_scipy(name):
    if name in SCIPY_FAMILIES:
        pytest.importorskip("scipy.special", reason="needs dbr-functions[special]")


def _params(name, which="param"):
    prefix = f"{name}.{which}."
    return {k[len(prefix) :]: v for k, v in REF.items() if k.startswith(prefix)}


def _build(name, params):
    cls = getattr(D, name)
    if name == "MultivariateNormal":
        return cls(params["loc"], scale_tril=params["scale_tril"])
    if name == "Uniform":
        return cls(**params)
    return cls(*params.values())


def _tol(name):
    return {"rtol": 1e-4, "atol": 1e-5} if name == "MultivariateNormal" else {"rtol": 1e-10}


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_and_statistics_match_chainer(name):
    _require_scipy(name)
    dist = _build(name, _params(name))
    x = REF[f"{name}.x"]
    numpy.testing.assert_allclose(dist.log_prob(x).array, REF[f"{name}.log_prob"], **_tol(name))
    stats = [k.split(".", 1)[1] for k in REF if k.startswith(f"{name}.")]
    checked = 0
    for stat in stats:
        if stat.startswith(("param", "grad")) or stat in ("x", "log_prob", "kl"):
            continue
        if name == "Normal" and stat in SCIPY_NORMAL_STATS and not HAVE_SCIPY:
            continue
        if stat in CALLS:
            value = getattr(dist, stat)(x)
        elif stat == "icdf":
            value = dist.icdf(REF["probs"])
        else:
            value = getattr(dist, stat)
        numpy.testing.assert_allclose(
            value.array, REF[f"{name}.{stat}"], err_msg=stat, **_tol(name)
        )
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_gradients_match_chainer(name):
    _require_scipy(name)
    variables = {k: Variable(v) for k, v in _params(name).items()}
    dist = _build(name, variables)
    F.sum(dist.log_prob(REF[f"{name}.x"])).backward()
    for k, v in variables.items():
        numpy.testing.assert_allclose(v.grad, REF[f"{name}.grad.{k}"], err_msg=k, **_tol(name))


@pytest.mark.parametrize("name", [n for n in NAMES if f"{n}.kl" in REF])
def test_kl_divergence_matches_chainer(name):
    _require_scipy(name)
    if name == "Gumbel":
        pytest.importorskip("scipy.special", reason="Gumbel's KL needs lgamma")
    p = _build(name, _params(name))
    q = _build(name, _params(name, "param2"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kl = D.kl_divergence(p, q)
    numpy.testing.assert_allclose(kl.array, REF[f"{name}.kl"], **_tol(name))


def test_independent_matches_chainer():
    base = D.Normal(REF["Independent.param.loc"], REF["Independent.param.scale"])
    ind = D.Independent(base)
    other = D.Independent(D.Normal(REF["Independent.param2.loc"], REF["Independent.param2.scale"]))
    x = REF["Independent.x"]
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    numpy.testing.assert_allclose(ind.log_prob(x).array, REF["Independent.log_prob"])
    numpy.testing.assert_allclose(ind.entropy.array, REF["Independent.entropy"])
    numpy.testing.assert_allclose(ind.prob(x).array, REF["Independent.prob"])
    numpy.testing.assert_allclose(D.kl_divergence(ind, other).array, REF["Independent.kl"])


@pytest.mark.skipif(not HAVE_SCIPY, reason="ndtr needs dbr-functions[special] (SciPy)")
def test_independent_cdf_matches_chainer():
    base = D.Normal(REF["Independent.param.loc"], REF["Independent.param.scale"])
    cdf = D.Independent(base).cdf(REF["Independent.x"])
    numpy.testing.assert_allclose(cdf.array, REF["Independent.cdf"])


def test_alternative_parameterisations_match_chainer():
    loc, scale = REF["Normal.param.loc"], REF["Normal.param.scale"]
    d = D.Normal(loc, log_scale=numpy.log(scale))
    numpy.testing.assert_allclose(
        d.log_prob(REF["Normal.x"]).array, REF["Normal_log_scale.log_prob"], rtol=1e-12
    )
    d = D.Bernoulli(logit=REF["Bernoulli_logit.param.logit"])
    numpy.testing.assert_allclose(
        d.log_prob(numpy.array([0.0, 1.0, 1.0])).array, REF["Bernoulli_logit.log_prob"]
    )
    d = D.Categorical(logit=REF["Categorical_logit.param.logit"])
    numpy.testing.assert_allclose(
        d.log_prob(numpy.array([[1, 3], [0, 2]])).array, REF["Categorical_logit.log_prob"]
    )
