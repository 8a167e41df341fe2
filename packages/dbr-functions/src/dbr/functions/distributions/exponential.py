"""The exponential distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


def _where_nonnegative(x, logp):
    """``logp`` where ``x >= 0``, ``-inf`` elsewhere (broadcast together)."""
    xa = _utils.array_of(x)
    logp = _utils.broadcast_parameter(logp, numpy.broadcast_shapes(xa.shape, logp.shape))
    return F.where(xa >= 0, logp, _utils.full_like(logp, -numpy.inf))


class Exponential(_utils.ScalarFamily):
    """The exponential distribution of rate ``lam``: ``p(x) = lam exp(-lam x)``, ``x >= 0``.

    Args:
        lam (Variable or array): the rate (positive), floating dtype.

    Samples are reparameterised (``eps / lam``, ``eps ~ Exp(1)``).
    """

    _parameters = {"lam": "the rate."}
    _support = "positive"

    def __init__(self, lam):
        super().__init__(lam)

    @cached_property
    def _log_lam(self):
        return F.log(self.lam)

    @cached_property
    def mean(self):
        """Variable: ``1 / lam``."""
        return 1 / self.lam

    @cached_property
    def variance(self):
        """Variable: ``1 / lam^2``."""
        return self.mean**2

    @cached_property
    def stddev(self):
        """Variable: ``1 / lam``."""
        return self.mean

    @cached_property
    def entropy(self):
        """Variable: ``1 - log(lam)``."""
        return 1 - self._log_lam

    def log_prob(self, x):
        """``log(lam) - lam x`` for ``x >= 0``, ``-inf`` for ``x < 0``."""
        return _where_nonnegative(x, self._log_lam - self.lam * x)

    def cdf(self, x):
        """``1 - exp(-lam x)``."""
        return -F.expm1(-self.lam * x)

    def survival_function(self, x):
        """``exp(-lam x)``."""
        return F.exp(-self.lam * x)

    def icdf(self, x):
        """``-log(1 - x) / lam``."""
        return -1 / self.lam * F.log1p(-x)

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Exponential", n)
        eps = _utils.draw(
            self.lam.xp, "standard_exponential", (n,) + self.batch_shape, self.lam.dtype
        )
        return eps / self.lam


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    return p._log_lam - q._log_lam + q.lam / p.lam - 1.0
