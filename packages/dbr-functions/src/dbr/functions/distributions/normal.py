"""The normal (Gaussian) distribution."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_HALF_LOG_2PIE = 0.5 * math.log(2 * math.pi * math.e)


class Normal(Distribution):
    """The normal distribution ``N(loc, scale^2)``.

    ``p(x) = exp(-(x - loc)^2 / (2 scale^2)) / sqrt(2 pi scale^2)``.

    Args:
        loc (Variable or array): the mean, floating dtype.
        scale (Variable or array): the standard deviation (positive), of
            ``loc``'s dtype and a shape that broadcasts with it.
        log_scale (Variable or array): ``log(scale)``, keyword only; give
            exactly one of ``scale`` and ``log_scale``.

    Samples are reparameterised (``loc + scale * eps``, ``eps ~ N(0, 1)``),
    so gradients flow through them to ``loc`` and ``scale``.
    """

    def __init__(self, loc, scale=None, *, log_scale=None):
        if (scale is None) == (log_scale is None):
            raise ValueError("Normal: give exactly one of scale and log_scale")
        self._loc = _utils.as_parameter("Normal", "loc", loc)
        if scale is not None:
            self._scale = _utils.as_parameter("Normal", "scale", scale)
            self._log_scale = None
            other = ("scale", self._scale)
        else:
            self._log_scale = _utils.as_parameter("Normal", "log_scale", log_scale)
            self._scale = None
            other = ("log_scale", self._log_scale)
        self._batch_shape = _utils.check_parameters("Normal", loc=self._loc, **dict([other]))

    @property
    def loc(self):
        """Variable: the mean."""
        return self._loc

    @cached_property
    def scale(self):
        """Variable: the standard deviation."""
        return self._scale if self._scale is not None else F.exp(self._log_scale)

    @cached_property
    def log_scale(self):
        """Variable: the logarithm of the standard deviation."""
        return self._log_scale if self._log_scale is not None else F.log(self._scale)

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
        """Variable: ``loc``."""
        return _utils.broadcast_parameter(self.loc, self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: ``scale``."""
        return _utils.broadcast_parameter(self.scale, self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``scale ** 2``."""
        return _utils.broadcast_parameter(self.scale**2, self._batch_shape)

    @cached_property
    def entropy(self):
        """Variable: ``log(scale) + log(2 pi e) / 2``."""
        return _utils.broadcast_parameter(self.log_scale + _HALF_LOG_2PIE, self._batch_shape)

    def log_prob(self, x):
        """``-log(scale) - log(2 pi) / 2 - (x - loc)^2 / (2 scale^2)``."""
        return -_LOG_SQRT_2PI - self.log_scale - 0.5 * (x - self.loc) ** 2 / self.scale**2

    def prob(self, x):
        """The density ``exp(log_prob(x))``."""
        return F.exp(self.log_prob(x))

    def cdf(self, x):
        """``ndtr((x - loc) / scale)``."""
        return F.ndtr((x - self.loc) / self.scale)

    def log_cdf(self, x):
        """``log_ndtr((x - loc) / scale)``."""
        return F.log_ndtr((x - self.loc) / self.scale)

    def survival_function(self, x):
        """``ndtr((loc - x) / scale)``."""
        return F.ndtr((self.loc - x) / self.scale)

    def log_survival_function(self, x):
        """``log_ndtr((loc - x) / scale)``."""
        return F.log_ndtr((self.loc - x) / self.scale)

    def icdf(self, x):
        """``loc + scale * ndtri(x)``, for ``x`` in (0, 1)."""
        return self.loc + self.scale * F.ndtri(x)

    def sample_n(self, n):
        """``n`` reparameterised draws ``loc + scale * eps``, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Normal", n)
        eps = _utils.draw(self.loc.xp, "standard_normal", (n,) + self._batch_shape, self.loc.dtype)
        return self.loc + self.scale * eps


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    return q.log_scale - p.log_scale + 0.5 * (p.scale**2 + (p.loc - q.loc) ** 2) / q.scale**2 - 0.5
