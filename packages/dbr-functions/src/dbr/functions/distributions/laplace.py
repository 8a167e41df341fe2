"""The Laplace distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


def _laplace_cdf(y):
    """The standard Laplace CDF ``1/2 - sign(y) expm1(-|y|) / 2``, differentiable in ``y``.

    ``y`` is a Variable, an array or a NumPy scalar.
    """
    y = _utils.as_operand(y)
    return 0.5 - 0.5 * F.sign(y) * F.expm1(-abs(y))


def _laplace_icdf(u):
    """The standard Laplace quantile ``sign(h) log1p(-|h|)`` with ``h = 1 - 2u``.

    ``u`` (in ``(0, 1)``) is a Variable, an array or a NumPy scalar; the
    result is differentiable in it.
    """
    h = 1 - 2 * _utils.as_operand(u)
    return F.sign(h) * F.log1p(-abs(h))


class Laplace(_utils.ScalarFamily):
    """The Laplace distribution: ``p(x) = exp(-|x - loc| / scale) / (2 scale)``.

    Args:
        loc (Variable or array): the location (mean and mode), floating dtype.
        scale (Variable or array): the scale (positive), of ``loc``'s dtype.

    Samples are reparameterised (``loc + scale eps``, ``eps ~ Laplace(0, 1)``).
    """

    _parameters = {"loc": "the location.", "scale": "the scale."}
    _support = "real"

    def __init__(self, loc, scale):
        super().__init__(loc, scale)

    @cached_property
    def mean(self):
        """Variable: ``loc``."""
        return _utils.broadcast_parameter(self.loc, self._batch_shape)

    @cached_property
    def mode(self):
        """Variable: ``loc``."""
        return self.mean

    @cached_property
    def variance(self):
        """Variable: ``2 scale^2``."""
        return _utils.broadcast_parameter(2 * self.scale**2, self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: ``sqrt(2) scale``."""
        return _utils.broadcast_parameter(math.sqrt(2) * self.scale, self._batch_shape)

    @cached_property
    def entropy(self):
        """Variable: ``1 + log(2 scale)``."""
        return _utils.broadcast_parameter(1.0 + F.log(2 * self.scale), self._batch_shape)

    def log_prob(self, x):
        """``-log(2 scale) - |x - loc| / scale``."""
        return -F.log(2 * self.scale) - abs(x - self.loc) / self.scale

    def prob(self, x):
        """``exp(-|x - loc| / scale) / (2 scale)``."""
        return 0.5 / self.scale * F.exp(-abs(x - self.loc) / self.scale)

    def cdf(self, x):
        """``1/2 - sign(y) expm1(-|y|) / 2`` with ``y = (x - loc) / scale``."""
        return _laplace_cdf((x - self.loc) / self.scale)

    def icdf(self, x):
        """``loc + scale sign(h) log1p(-|h|)`` with ``h = 1 - 2x``."""
        return self.loc + self.scale * _laplace_icdf(x)

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Laplace", n)
        eps = _utils.draw(self.loc.xp, "laplace", (n,) + self._batch_shape, self.loc.dtype)
        return self.scale * eps + self.loc


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    diff = abs(p.loc - q.loc)
    return (
        F.log(q.scale)
        - F.log(p.scale)
        + diff / q.scale
        + p.scale / q.scale * F.exp(-diff / p.scale)
        - 1
    )
