"""The beta distribution."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import register_kl


def _log_beta(a, b):
    return F.lgamma(a) + F.lgamma(b) - F.lgamma(a + b)


class Beta(_utils.ScalarFamily):
    """The beta distribution on ``[0, 1]``: ``p(x) = x^(a-1) (1-x)^(b-1) / B(a, b)``.

    Needs SciPy on the CPU (``dbr-functions[special]``) for lgamma/digamma.

    Args:
        a (Variable or array): the first shape parameter (positive), floating dtype.
        b (Variable or array): the second (positive), of ``a``'s dtype.

    Samples are not differentiable.
    """

    _parameters = {"a": "the first shape parameter.", "b": "the second shape parameter."}
    _support = "[0, 1]"

    def __init__(self, a, b):
        super().__init__(a, b)

    @cached_property
    def _a_plus_b(self):
        return self.a + self.b

    @cached_property
    def mean(self):
        """Variable: ``a / (a + b)``."""
        return _utils.broadcast_parameter(self.a / self._a_plus_b, self._batch_shape)

    @cached_property
    def variance(self):
        """Variable: ``a b / ((a + b)^2 (a + b + 1))``."""
        apb = self._a_plus_b
        return _utils.broadcast_parameter(self.a * self.b / apb**2 / (apb + 1), self._batch_shape)

    @cached_property
    def stddev(self):
        """Variable: the square root of :attr:`variance`."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``log B(a, b) - (a-1) psi(a) - (b-1) psi(b) + (a+b-2) psi(a+b)``."""
        a, b, apb = self.a, self.b, self._a_plus_b
        return _utils.broadcast_parameter(
            _log_beta(a, b)
            - (a - 1) * F.digamma(a)
            - (b - 1) * F.digamma(b)
            + (apb - 2) * F.digamma(apb),
            self._batch_shape,
        )

    def log_prob(self, x):
        """``(a-1) log x + (b-1) log(1-x) - log B(a, b)`` on ``[0, 1]``, ``-inf`` outside."""
        x = as_variable(x)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            logp = (
                (self.a - 1) * F.log(x) + (self.b - 1) * F.log(1 - x) - _log_beta(self.a, self.b)
            )
        inside = (x.array >= 0) & (x.array <= 1)
        return F.where(inside, logp, _utils.full_like(logp, -numpy.inf))

    def sample_n(self, n):
        """``n`` draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Beta", n)
        xp = self.a.xp
        a = xp.broadcast_to(self.a.array, self._batch_shape)
        b = xp.broadcast_to(self.b.array, self._batch_shape)
        return as_variable(_utils.draw(xp, "beta", (n,) + self._batch_shape, self.a.dtype, a, b))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    p_apb = p._a_plus_b
    return (
        _log_beta(q.a, q.b)
        - _log_beta(p.a, p.b)
        + (p.a - q.a) * F.digamma(p.a)
        + (p.b - q.b) * F.digamma(p.b)
        + (q._a_plus_b - p_apb) * F.digamma(p_apb)
    )
