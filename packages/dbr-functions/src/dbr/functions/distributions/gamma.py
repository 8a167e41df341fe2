"""The gamma distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl
from dbr.functions.distributions.exponential import _where_nonnegative


class Gamma(_utils.ScalarFamily):
    """The gamma distribution of shape ``k`` and scale ``theta``.

    ``p(x) = x^(k-1) exp(-x / theta) / (Gamma(k) theta^k)`` for ``x >= 0``.
    Needs SciPy on the CPU (``dbr-functions[special]``) for lgamma/digamma.

    Args:
        k (Variable or array): the shape (positive), floating dtype.
        theta (Variable or array): the scale (positive), of ``k``'s dtype.

    Samples are differentiable in ``theta`` only (``theta * eps``,
    ``eps ~ Gamma(k, 1)``), as in Chainer.
    """

    _parameters = {"k": "the shape parameter.", "theta": "the scale parameter."}
    _support = "positive"

    def __init__(self, k, theta):
        super().__init__(k, theta)

    @cached_property
    def mean(self):
        """Variable: ``k theta``."""
        return _utils.broadcast_parameter(self.k * self.theta, self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``k theta^2``."""
        return self.mean * self.theta

    @cached_property
    def stddev(self):
        """Variable: ``sqrt(k) theta``."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``k + log(theta) + lgamma(k) + (1 - k) digamma(k)``."""
        k = self.k
        return _utils.broadcast_parameter(
            k + F.log(self.theta) + F.lgamma(k) + (1 - k) * F.digamma(k), self._batch_shape
        )

    def log_prob(self, x):
        """``(k - 1) log x - x / theta - lgamma(k) - k log(theta)``; ``-inf`` for ``x < 0``."""
        k = self.k
        with numpy.errstate(invalid="ignore", divide="ignore"):
            logp = -F.lgamma(k) - k * F.log(self.theta) + (k - 1) * F.log(x) - x / self.theta
        return _where_nonnegative(x, logp)

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Gamma", n)
        shape = (n,) + self._batch_shape
        k = self.k.xp.broadcast_to(self.k.array, self._batch_shape)
        eps = _utils.draw(self.k.xp, "gamma", shape, self.k.dtype, k)
        return self.theta * eps


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return (
        (p.k - q.k) * F.digamma(p.k)
        - (F.lgamma(p.k) - F.lgamma(q.k))
        + q.k * (F.log(q.theta) - F.log(p.theta))
        + p.k * (p.theta / q.theta - 1)
    )
