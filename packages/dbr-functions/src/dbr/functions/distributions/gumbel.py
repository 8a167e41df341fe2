"""The Gumbel distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl

_EULER = 0.57721566490153286060651209008240243104215933593992


class Gumbel(Distribution):
    """The Gumbel distribution: ``p(x) = exp(-(y + exp(-y))) / scale``, ``y = (x - loc) / scale``.

    Args:
        loc (Variable or array): the location (mode), floating dtype.
        scale (Variable or array): the scale (positive), of ``loc``'s dtype.

    Samples are reparameterised (``loc + scale eps``, ``eps ~ Gumbel(0, 1)``).
    """

    def __init__(self, loc, scale):
        self._loc = _utils.as_parameter("Gumbel", "loc", loc)
        self._scale = _utils.as_parameter("Gumbel", "scale", scale)
        self._batch_shape = _utils.check_parameters("Gumbel", loc=self._loc, scale=self._scale)

    @property
    def loc(self):
        """Variable: the location."""
        return self._loc

    @property
    def scale(self):
        """Variable: the scale."""
        return self._scale

    @cached_property
    def _log_scale(self):
        return F.log(self.scale)

    @property
    def batch_shape(self):
        """tuple: the broadcast shape of ``loc`` and ``scale``."""
        return self._batch_shape

    @property
    def event_shape(self):
        """tuple: ``()``."""
        return ()

    @property
    def params(self):
        """dict: ``{'loc': loc, 'scale': scale}``."""
        return {"loc": self.loc, "scale": self.scale}

    @property
    def support(self):
        """str: ``'real'``."""
        return "real"

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
