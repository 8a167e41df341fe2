"""The Poisson distribution."""

from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


class Poisson(_utils.ScalarFamily):
    """The Poisson distribution: ``P(X = x) = lam^x exp(-lam) / x!``.

    Needs SciPy on the CPU (``dbr-functions[special]``) for lgamma.

    Args:
        lam (Variable or array): the rate (positive), floating dtype.

    Samples are counts in ``lam``'s dtype, not differentiable.
    """

    _parameters = {"lam": "the rate."}
    _support = "non negative integer"

    def __init__(self, lam):
        super().__init__(lam)

    @cached_property
    def _log_lam(self):
        return F.log(self.lam)

    @cached_property
    def mean(self):
        """Variable: ``lam``."""
        return self.lam

    @cached_property
    def variance(self):
        """Variable: ``lam``."""
        return self.lam

    @cached_property
    def stddev(self):
        """Variable: ``sqrt(lam)``."""
        return F.sqrt(self.lam)

    def log_prob(self, x):
        """``x log(lam) - lgamma(x + 1) - lam``; ``x`` (counts) is cast to ``lam``'s dtype."""
        x = _utils.array_of(x).astype(self.lam.dtype, copy=False)
        # astype: NumPy 1.x makes a 0-d float32 array plus 1 a float64 scalar.
        return x * self._log_lam - F.lgamma((x + 1).astype(x.dtype, copy=False)) - self.lam

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``, in ``lam``'s dtype."""
        n = _utils.check_sample_count("Poisson", n)
        xp = self.lam.xp
        return as_variable(
            _utils.draw(xp, "poisson", (n,) + self.batch_shape, self.lam.dtype, self.lam.array)
        )


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.lam * (p._log_lam - q._log_lam) - p.lam + q.lam
