"""The geometric distribution."""

from functools import cached_property

import dbr.functions as F
from dbr.core import Variable, as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


class Geometric(_utils.ScalarFamily):
    """The number of Bernoulli(p) trials up to the first success: ``P(X = x) = (1-p)^(x-1) p``.

    Args:
        p (Variable or array): the success probability in (0, 1], floating dtype.

    Samples (``x = 1, 2, ...``, in ``p``'s dtype) are not differentiable.
    """

    _parameters = {"p": "the success probability."}
    _support = "positive integer"

    def __init__(self, p):
        super().__init__(p)

    @cached_property
    def mean(self):
        """Variable: ``1 / p``."""
        return 1 / self.p

    @cached_property
    def variance(self):
        """Variable: ``(1 - p) / p^2``."""
        return (1 - self.p) / self.p**2

    @cached_property
    def stddev(self):
        """Variable: the square root of :attr:`variance`."""
        return F.sqrt(self.variance)

    def log_prob(self, x):
        """``(x - 1) log(1 - p) + log p``; an array ``x`` is cast to ``p``'s dtype."""
        if not isinstance(x, Variable):
            x = x.astype(self.p.dtype, copy=False)
        return (x - 1) * F.log(1 - self.p) + F.log(self.p)

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Geometric", n)
        xp = self.p.xp
        return as_variable(
            _utils.draw(xp, "geometric", (n,) + self.batch_shape, self.p.dtype, self.p.array)
        )


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return (1 / p.p - 1) * (F.log(1 - p.p) - F.log(1 - q.p)) + F.log(p.p) - F.log(q.p)
