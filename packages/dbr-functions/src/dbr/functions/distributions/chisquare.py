"""The chi-square distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils

_LOG2 = math.log(2.0)


class Chisquare(_utils.ScalarFamily):
    """The chi-square distribution with ``k`` degrees of freedom (``Gamma(k/2, 2)``).

    ``p(x) = x^(k/2 - 1) exp(-x/2) / (2^(k/2) Gamma(k/2))``. Needs SciPy on
    the CPU (``dbr-functions[special]``) for lgamma/digamma.

    Args:
        k (Variable or array): the degrees of freedom (positive), floating dtype.

    Samples are not differentiable.
    """

    _parameters = {"k": "the degrees of freedom."}
    _support = "positive"

    def __init__(self, k):
        super().__init__(k)

    @cached_property
    def _half_k(self):
        return 0.5 * self.k

    @cached_property
    def mean(self):
        """Variable: ``k``."""
        return self.k

    @cached_property
    def variance(self):
        """Variable: ``2 k``."""
        return 2 * self.k

    @cached_property
    def stddev(self):
        """Variable: ``sqrt(2 k)``."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``k/2 + log 2 + lgamma(k/2) + (1 - k/2) digamma(k/2)``."""
        h = self._half_k
        return h + _LOG2 + F.lgamma(h) + (1 - h) * F.digamma(h)

    def log_prob(self, x):
        """``(k/2 - 1) log x - x/2 - (k/2) log 2 - lgamma(k/2)``."""
        h = self._half_k
        return -F.lgamma(h) - h * _LOG2 + (h - 1) * F.log(x) - 0.5 * x

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Chisquare", n)
        xp = self.k.xp
        return as_variable(
            _utils.draw(xp, "chisquare", (n,) + self.batch_shape, self.k.dtype, self.k.array)
        )
