"""The continuous uniform distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl


class Uniform(Distribution):
    """The uniform distribution on ``[low, high]``, keyword arguments only.

    Give either ``low`` and ``high``, or ``loc`` and ``scale``
    (``low = loc``, ``high = loc + scale``), as Chainer does.

    Args:
        low (Variable or array): the lower bound, floating dtype.
        high (Variable or array): the upper bound, of ``low``'s dtype.
        loc (Variable or array): the lower bound (the other form).
        scale (Variable or array): the width ``high - low`` (the other form).

    Samples are reparameterised (``low + (high - low) * u``, ``u ~ U(0, 1)``).
    """

    def __init__(self, *, low=None, high=None, loc=None, scale=None):
        use_low_high = low is not None and high is not None
        use_loc_scale = loc is not None and scale is not None
        if use_low_high == use_loc_scale or (
            (low is not None or high is not None) and (loc is not None or scale is not None)
        ):
            raise ValueError("Uniform: give either low and high, or loc and scale (not both)")
        self._use_low_high = use_low_high
        if use_low_high:
            self._low = _utils.as_parameter("Uniform", "low", low)
            self._high = _utils.as_parameter("Uniform", "high", high)
            self._batch_shape = _utils.check_parameters("Uniform", low=self._low, high=self._high)
        else:
            self._loc = _utils.as_parameter("Uniform", "loc", loc)
            self._scale = _utils.as_parameter("Uniform", "scale", scale)
            self._batch_shape = _utils.check_parameters(
                "Uniform", loc=self._loc, scale=self._scale
            )

    @cached_property
    def low(self):
        """Variable: the lower bound."""
        return self._low if self._use_low_high else self._loc

    @cached_property
    def high(self):
        """Variable: the upper bound."""
        return self._high if self._use_low_high else self._loc + self._scale

    @cached_property
    def loc(self):
        """Variable: the lower bound (``low``)."""
        return self._low if self._use_low_high else self._loc

    @cached_property
    def scale(self):
        """Variable: the width ``high - low``."""
        return self._high - self._low if self._use_low_high else self._scale

    @property
    def batch_shape(self):
        """tuple: the broadcast shape of the parameters."""
        return self._batch_shape

    @property
    def event_shape(self):
        """tuple: ``()``."""
        return ()

    @property
    def params(self):
        """dict: ``{'low', 'high'}`` or ``{'loc', 'scale'}``, as given."""
        if self._use_low_high:
            return {"low": self.low, "high": self.high}
        return {"loc": self.loc, "scale": self.scale}

    @property
    def support(self):
        """str: ``'[low, high]'``."""
        return "[low, high]"

    @cached_property
    def mean(self):
        """Variable: ``(low + high) / 2``."""
        return _utils.broadcast_parameter((self.high + self.low) / 2, self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``(high - low)^2 / 12``."""
        return _utils.broadcast_parameter(self.scale**2 / 12, self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: ``(high - low) / sqrt(12)``."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``log(high - low)``."""
        return _utils.broadcast_parameter(F.log(self.scale), self._batch_shape)

    def log_prob(self, x):
        """``-log(high - low)`` on ``[low, high]``, ``-inf`` outside."""
        xa = _utils.array_of(x)
        xp = _utils.xp_of(xa)
        logp = -F.log(self.scale)
        logp = _utils.broadcast_parameter(logp, numpy.broadcast_shapes(xa.shape, logp.shape))
        inside = (xa >= self.low.array) & (xa <= self.high.array)
        return F.where(inside, logp, _utils.full_like(logp, -xp.inf))

    def prob(self, x):
        """``1 / (high - low)`` on ``[low, high]``, 0 outside."""
        return F.exp(self.log_prob(x))

    def cdf(self, x):
        """``clip((x - low) / (high - low), 0, 1)``."""
        return F.clip((x - self.loc) / self.scale, 0.0, 1.0)

    def icdf(self, x):
        """``low + (high - low) x``."""
        return x * self.scale + self.loc

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Uniform", n)
        u = _utils.draw(self.low.xp, "uniform", (n,) + self._batch_shape, self.low.dtype, 0, 1)
        return self.icdf(u)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    xp = p.low.xp
    outside = (p.high.array > q.high.array) | (p.low.array < q.low.array)
    kl = F.log(q.high - q.low) - F.log(p.high - p.low)
    return F.where(outside, _utils.full_like(kl, xp.inf), kl)
