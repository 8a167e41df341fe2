"""The Bernoulli distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl


def _bernoulli_log_prob(logit, x, binary_check=False):
    """``x log p + (1 - x) log(1 - p)`` with ``p = sigmoid(logit)``, differentiable in ``logit``.

    An infinite ``logit`` gives ``log x`` (``+inf``) or ``log(1 - x)``
    (``-inf``), with a zero gradient there; with ``binary_check``, values
    other than 0 and 1 give ``-inf``. ``x`` (an array or Variable, whose
    gradient is not computed) is cast to ``logit``'s dtype and broadcast with it.
    """
    logit = as_variable(logit)
    xp = logit.xp
    x = _utils.array_of(x).astype(logit.dtype, copy=False)
    infinite = xp.isinf(logit.array)
    if infinite.any():
        # The general formula is NaN at an infinite logit: evaluate it at 0 there.
        finite_logit = F.where(infinite, xp.zeros_like(logit.array), logit)
    else:
        finite_logit = logit
    logp = finite_logit * (x - 1) - F.softplus(-finite_logit)
    if infinite.any():
        shape = logp.shape
        with numpy.errstate(divide="ignore"):
            log_x, log_1mx = xp.log(x), xp.log1p(-x)
        pos_inf = xp.broadcast_to(infinite & (logit.array > 0), shape)
        neg_inf = xp.broadcast_to(infinite & (logit.array < 0), shape)
        logp = F.where(pos_inf, xp.broadcast_to(log_x, shape).astype(logp.dtype), logp)
        logp = F.where(neg_inf, xp.broadcast_to(log_1mx, shape).astype(logp.dtype), logp)
    if binary_check:
        invalid = xp.broadcast_to((x != 0) & (x != 1), logp.shape)
        logp = F.where(invalid, _utils.full_like(logp, -xp.inf), logp)
    return logp


class Bernoulli(Distribution):
    """The Bernoulli distribution: ``P(X = 1) = p``, ``P(X = 0) = 1 - p``.

    Args:
        p (Variable or array): the probability of 1, floating dtype.
        logit (Variable or array): ``log(p / (1 - p))`` instead; give exactly
            one of ``p`` and ``logit``.
        binary_check (bool): when true, :meth:`log_prob` is ``-inf`` and
            :meth:`prob` is 0 at values other than 0 and 1.

    Samples are not differentiable.
    """

    def __init__(self, p=None, logit=None, binary_check=False):
        if (p is None) == (logit is None):
            raise ValueError("Bernoulli: give exactly one of p and logit")
        if p is not None:
            self._p = _utils.as_parameter("Bernoulli", "p", p)
            self._logit = None
        else:
            self._logit = _utils.as_parameter("Bernoulli", "logit", logit)
            self._p = None
        self.binary_check = bool(binary_check)

    @cached_property
    def p(self):
        """Variable: the probability of 1."""
        return self._p if self._p is not None else F.sigmoid(self._logit)

    @cached_property
    def logit(self):
        """Variable: the log-odds ``log(p) - log(1 - p)``."""
        return self._logit if self._logit is not None else F.log(self._p) - F.log1p(-self._p)

    @property
    def batch_shape(self):
        """tuple: the shape of ``p``."""
        return (self._p if self._p is not None else self._logit).shape

    @property
    def event_shape(self):
        """tuple: ``()``."""
        return ()

    @property
    def params(self):
        """dict: ``{'logit': logit}``."""
        return {"logit": self.logit}

    @property
    def support(self):
        """str: ``'{0, 1}'``."""
        return "{0, 1}"

    @cached_property
    def mean(self):
        """Variable: ``p``."""
        return self.p

    @cached_property
    def variance(self):
        """Variable: ``p (1 - p)``."""
        return self.p * (1 - self.p)

    @cached_property
    def stddev(self):
        """Variable: ``sqrt(p (1 - p))``."""
        return self.variance**0.5

    @property
    def entropy(self):
        """Variable: ``-p log p - (1 - p) log(1 - p)`` (with ``0 log 0 = 0``)."""
        p = self.p
        return -_utils.xlogx(p) - _utils.xlogx(1 - p)

    def log_prob(self, x):
        """``x log p + (1 - x) log(1 - p)``, computed from ``logit``.

        See :func:`_bernoulli_log_prob`; ``x`` is cast to ``p``'s dtype.
        """
        return _bernoulli_log_prob(self.logit, x, self.binary_check)

    def prob(self, x):
        """``x p + (1 - x)(1 - p)``; 0 at non-binary ``x`` with ``binary_check``."""
        x = _utils.array_of(x).astype(self.p.dtype, copy=False)
        prob = x * self.p + (1 - x) * (1 - self.p)
        if self.binary_check:
            valid = ((x == 0) | (x == 1)).astype(prob.dtype)
            prob = prob * valid
        return prob

    def sample_n(self, n):
        """``n`` draws of 0 or 1 (integers), of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Bernoulli", n)
        p = self.p.array
        xp = self.p.xp
        return as_variable(xp.random.binomial(1, p, size=(n,) + p.shape))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    return (p.logit - q.logit) * (p.p - 1) - F.softplus(-p.logit) + F.softplus(-q.logit)
