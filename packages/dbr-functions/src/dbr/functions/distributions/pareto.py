"""The Pareto distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


class Pareto(_utils.ScalarFamily):
    """The Pareto distribution: ``p(x) = alpha scale^alpha / x^(alpha + 1)`` for ``x >= scale``.

    Args:
        scale (Variable or array): the minimum value (positive), floating dtype.
        alpha (Variable or array): the shape (positive), of ``scale``'s dtype.

    Samples are reparameterised in ``scale`` (``scale (eps + 1)``,
    ``eps ~ Lomax(alpha)``), as in Chainer.
    """

    _parameters = {"scale": "the minimum value.", "alpha": "the shape parameter."}
    _support = "[scale, inf]"

    def __init__(self, scale, alpha):
        super().__init__(scale, alpha)

    @cached_property
    def _log_scale(self):
        return F.log(self.scale)

    @cached_property
    def _log_alpha(self):
        return F.log(self.alpha)

    def _where_alpha_above(self, bound, value):
        value = _utils.broadcast_parameter(value, self._batch_shape)
        above = self.alpha.xp.broadcast_to(self.alpha.array > bound, self._batch_shape)
        return F.where(above, value, _utils.full_like(value, numpy.inf))

    @cached_property
    def mean(self):
        """Variable: ``alpha scale / (alpha - 1)`` for ``alpha > 1``, ``inf`` otherwise."""
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return self._where_alpha_above(1, self.alpha * self.scale / (self.alpha - 1))

    @cached_property
    def variance(self):
        """Variable: ``scale^2 alpha / ((alpha-1)^2 (alpha-2))`` if ``alpha > 2``, else inf."""
        a = self.alpha
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return self._where_alpha_above(2, self.scale**2 * a / (a - 1) ** 2 / (a - 2))

    @cached_property
    def entropy(self):
        """Variable: ``log(scale / alpha) + 1 / alpha + 1``."""
        return _utils.broadcast_parameter(
            -self._log_alpha + self._log_scale + 1.0 / self.alpha + 1.0, self._batch_shape
        )

    def log_prob(self, x):
        """``log alpha + alpha log(scale) - (alpha+1) log x`` for ``x >= scale``, else ``-inf``."""
        x = as_variable(x)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            logp = self._log_alpha + self.alpha * self._log_scale - (self.alpha + 1) * F.log(x)
        inside = x.array >= self.scale.array
        return F.where(inside, logp, _utils.full_like(logp, -numpy.inf))

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Pareto", n)
        xp = self.alpha.xp
        alpha = xp.broadcast_to(self.alpha.array, self._batch_shape)
        eps = _utils.draw(xp, "pareto", (n,) + self._batch_shape, self.alpha.dtype, alpha)
        return self.scale * (eps + 1)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    kl = (
        q.alpha * (p._log_scale - q._log_scale)
        + p._log_alpha
        - q._log_alpha
        + (q.alpha - p.alpha) / p.alpha
    )
    return F.where(p.scale.array >= q.scale.array, kl, _utils.full_like(kl, numpy.inf))
