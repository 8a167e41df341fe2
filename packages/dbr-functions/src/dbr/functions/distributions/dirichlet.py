"""The Dirichlet distribution."""

from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl


def _log_multivariate_beta(alpha):
    return F.sum(F.lgamma(alpha), axis=-1) - F.lgamma(F.sum(alpha, axis=-1))


class Dirichlet(Distribution):
    """The Dirichlet distribution on the probability simplex.

    ``p(x) = prod_i x_i^(alpha_i - 1) / B(alpha)`` with
    ``B(alpha) = prod_i Gamma(alpha_i) / Gamma(sum_i alpha_i)``. Needs SciPy on
    the CPU (``dbr-functions[special]``).

    Args:
        alpha (Variable or array): concentrations (positive) in the last
            axis, floating dtype; the other axes are the batch.

    Samples are not differentiable.
    """

    def __init__(self, alpha):
        self._alpha = _utils.as_parameter("Dirichlet", "alpha", alpha)
        if self._alpha.ndim == 0:
            raise ValueError("Dirichlet: alpha must have an event axis (the last), got shape ()")

    @property
    def alpha(self):
        """Variable: the concentrations."""
        return self._alpha

    @cached_property
    def alpha0(self):
        """Variable: ``sum_i alpha_i``, of shape ``batch_shape``."""
        return F.sum(self.alpha, axis=-1)

    @property
    def batch_shape(self):
        """tuple: the shape of ``alpha`` without its last axis."""
        return self.alpha.shape[:-1]

    @property
    def event_shape(self):
        """tuple: ``(K,)``, the last axis of ``alpha``."""
        return self.alpha.shape[-1:]

    @property
    def params(self):
        """dict: ``{'alpha': alpha}``."""
        return {"alpha": self.alpha}

    @property
    def support(self):
        """str: ``'[0, 1]'``."""
        return "[0, 1]"

    @cached_property
    def mean(self):
        """Variable: ``alpha / alpha0``."""
        return self.alpha / F.expand_dims(self.alpha0, axis=-1)

    @cached_property
    def variance(self):
        """Variable: ``alpha (alpha0 - alpha) / (alpha0^2 (alpha0 + 1))``."""
        alpha0 = F.expand_dims(self.alpha0, axis=-1)
        return self.alpha * (alpha0 - self.alpha) / alpha0**2 / (alpha0 + 1)

    @cached_property
    def entropy(self):
        """Variable: the entropy, of shape ``batch_shape``.

        ``log B(alpha) + (alpha0 - K) psi(alpha0) - sum_i (alpha_i - 1) psi(alpha_i)``.
        """
        k = self.event_shape[0]
        return (
            _log_multivariate_beta(self.alpha)
            + (self.alpha0 - k) * F.digamma(self.alpha0)
            - F.sum((self.alpha - 1) * F.digamma(self.alpha), axis=-1)
        )

    def log_prob(self, x):
        """``sum_i (alpha_i - 1) log x_i - log B(alpha)``, of shape ``x.shape[:-1]``."""
        return -_log_multivariate_beta(self.alpha) + F.sum((self.alpha - 1) * F.log(x), axis=-1)

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + alpha.shape``."""
        n = _utils.check_sample_count("Dirichlet", n)
        alpha = self.alpha.array
        xp = self.alpha.xp
        # Normalised gamma draws cover the whole batch in one call
        # (xp.random.dirichlet takes a single alpha).
        g = xp.random.standard_gamma(alpha, size=(n,) + alpha.shape)
        return as_variable((g / g.sum(axis=-1, keepdims=True)).astype(alpha.dtype, copy=False))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    psi0 = F.expand_dims(F.digamma(p.alpha0), axis=-1)
    return (
        _log_multivariate_beta(q.alpha)
        - _log_multivariate_beta(p.alpha)
        + F.sum((p.alpha - q.alpha) * (F.digamma(p.alpha) - psi0), axis=-1)
    )
