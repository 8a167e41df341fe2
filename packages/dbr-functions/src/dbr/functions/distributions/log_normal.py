"""The log-normal distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class LogNormal(_utils.ScalarFamily):
    """The distribution of ``exp(Y)`` for ``Y ~ N(mu, sigma^2)``.

    Args:
        mu (Variable or array): the mean of ``log X``, floating dtype.
        sigma (Variable or array): the standard deviation of ``log X``
            (positive), of ``mu``'s dtype.

    Samples are reparameterised (``exp(mu + sigma eps)``).
    """

    _parameters = {"mu": "the mean of ``log X``.", "sigma": "the standard deviation of ``log X``."}
    _support = "positive"

    def __init__(self, mu, sigma):
        super().__init__(mu, sigma)

    @cached_property
    def _log_sigma(self):
        return F.log(self.sigma)

    @cached_property
    def mean(self):
        """Variable: ``exp(mu + sigma^2 / 2)``."""
        return _utils.broadcast_parameter(F.exp(self.mu + 0.5 * self.sigma**2), self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``exp(2 mu + sigma^2) (exp(sigma^2) - 1)``."""
        s2 = self.sigma**2
        return _utils.broadcast_parameter(F.exp(2 * self.mu + s2) * F.expm1(s2), self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: the square root of :attr:`variance`."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``mu + log(sigma) + log(2 pi e) / 2``."""
        return _utils.broadcast_parameter(
            0.5 + _LOG_SQRT_2PI + self._log_sigma + self.mu, self._batch_shape
        )

    def log_prob(self, x):
        """``-log x - log(sigma) - log(2 pi) / 2 - (log x - mu)^2 / (2 sigma^2)``."""
        log_x = F.log(x)
        return (
            -_LOG_SQRT_2PI - self._log_sigma - log_x - 0.5 * (log_x - self.mu) ** 2 / self.sigma**2
        )

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("LogNormal", n)
        eps = _utils.draw(self.mu.xp, "standard_normal", (n,) + self._batch_shape, self.mu.dtype)
        return F.exp(self.mu + self.sigma * eps)


@register_kl(LogNormal, LogNormal)
def _kl_log_normal_log_normal(p, q):
    return 0.5 * ((p.mu - q.mu) ** 2 + p.sigma**2) / q.sigma**2 - 0.5 + q._log_sigma - p._log_sigma
