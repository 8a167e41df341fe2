"""dbr.functions.distributions: probability distributions with Chainer v7's API.

Each distribution holds a batch of parameter sets as Variables; its
statistics (``mean``, ``variance``, ``entropy``, ...), densities
(``log_prob``, ``prob``, ``cdf``, ...) and, where the family allows it,
its samples are built from dbr's differentiable functions, so gradients
reach the parameters. :func:`kl_divergence` looks up the closed form
registered for a pair of families with :func:`register_kl`.

The families that use lgamma/digamma (Beta, Chisquare, Dirichlet, Gamma,
Gumbel's KL, Poisson) need SciPy on the CPU (``dbr-functions[special]``).

>>> import numpy as np
>>> import dbr.functions.distributions as D
>>> d = D.Normal(np.zeros(2, np.float32), np.ones(2, np.float32))
>>> d.log_prob(np.zeros(2, np.float32)).array
array([-0.9189385, -0.9189385], dtype=float32)
"""

from dbr.functions.distributions.bernoulli import Bernoulli
from dbr.functions.distributions.beta import Beta
from dbr.functions.distributions.categorical import Categorical
from dbr.functions.distributions.cauchy import Cauchy
from dbr.functions.distributions.chisquare import Chisquare
from dbr.functions.distributions.dirichlet import Dirichlet
from dbr.functions.distributions.distribution import (
    Distribution,
    cross_entropy,
    kl_divergence,
    register_kl,
)
from dbr.functions.distributions.exponential import Exponential
from dbr.functions.distributions.gamma import Gamma
from dbr.functions.distributions.geometric import Geometric
from dbr.functions.distributions.gumbel import Gumbel
from dbr.functions.distributions.independent import Independent
from dbr.functions.distributions.laplace import Laplace
from dbr.functions.distributions.log_normal import LogNormal
from dbr.functions.distributions.multivariate_normal import MultivariateNormal
from dbr.functions.distributions.normal import Normal
from dbr.functions.distributions.one_hot_categorical import OneHotCategorical
from dbr.functions.distributions.pareto import Pareto
from dbr.functions.distributions.poisson import Poisson
from dbr.functions.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Cauchy", "Chisquare", "Dirichlet", "Distribution",
    "Exponential", "Gamma", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal",
    "MultivariateNormal", "Normal", "OneHotCategorical", "Pareto", "Poisson", "Uniform",
    "cross_entropy", "kl_divergence", "register_kl",
]  # fmt: skip
