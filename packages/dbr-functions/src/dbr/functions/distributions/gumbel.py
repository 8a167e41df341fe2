"""The Gumbel distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl

_EULER = 0.57721566490153286060651209008240243104215933593992


class Gumbel(_utils.ScalarFamily):
    """The Gumbel distribution: ``p(x) = exp(-(y + exp(-y))) / scale``, ``y = (x - loc) / scale``.

    Args:
        loc (Variable or array): the location (mode), floating dtype.
        scale (Variable or array): the scale (positive), of ``loc``'s dtype.

    Samples are reparameterised (``loc + scale eps``, ``eps ~ Gumbel(0, 1)``).
    """

    _parameters = {"loc": "the location.", "scale": "the scale."}
    _support = "real"

    def __init__(self, loc, scale):
        super().__init__(loc, scale)

    @cached_property
    def _log_scale(self):
        return F.log(self.scale)

    @cached_property
    def mean(self):
        """Variable: ``loc + gamma scale`` (``gamma`` is Euler's constant)."""
        return _utils.broadcast_parameter(self.loc + _EULER * self.scale, self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``pi^2 scale^2 / 6``."""
        return _utils.broadcast_parameter((math.pi**2 / 6) * self.scale**2, self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: ``pi scale / sqrt(6)``."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``log(scale) + gamma + 1``."""
        return _utils.broadcast_parameter(self._log_scale + (_EULER + 1), self._batch_shape)

    def log_prob(self, x):
        """``-log(scale) - y - exp(-y)`` with ``y = (x - loc) / scale``."""
        y = (x - self.loc) / self.scale
        return -self._log_scale - y - F.exp(-y)

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Gumbel", n)
        eps = _utils.draw(self.loc.xp, "gumbel", (n,) + self._batch_shape, self.loc.dtype)
        return self.scale * eps + self.loc


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    return (
        q._log_scale
        - p._log_scale
        + _EULER * (ratio - 1.0)
        + F.exp((q.loc - p.loc) / q.scale + F.lgamma(ratio + 1.0))
        - 1
        + (p.loc - q.loc) / q.scale
    )
