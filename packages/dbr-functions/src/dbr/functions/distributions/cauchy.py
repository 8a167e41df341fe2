"""The Cauchy distribution."""

import math
import warnings
from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils


class Cauchy(_utils.ScalarFamily):
    """The Cauchy distribution: ``p(x) = scale / (pi ((x - loc)^2 + scale^2))``.

    Its mean and variance are undefined: they are NaN, with a RuntimeWarning.

    Args:
        loc (Variable or array): the location (median), floating dtype.
        scale (Variable or array): the scale (positive), of ``loc``'s dtype.

    Samples are reparameterised (``loc + scale eps``, ``eps ~ Cauchy(0, 1)``).
    """

    _parameters = {"loc": "the location.", "scale": "the scale."}
    _support = "real"

    def __init__(self, loc, scale):
        super().__init__(loc, scale)

    def _undefined(self, what):
        warnings.warn(f"{what} of the Cauchy distribution is undefined.", RuntimeWarning, 3)
        xp = self.loc.xp
        return as_variable(xp.full(self._batch_shape, xp.nan, self.loc.dtype))

    @cached_property
    def mean(self):
        """Variable: NaN (undefined), with a RuntimeWarning."""
        return self._undefined("Mean")

    @cached_property
    def variance(self):
        """Variable: NaN (undefined), with a RuntimeWarning."""
        return self._undefined("Variance")

    @cached_property
    def entropy(self):
        """Variable: ``log(4 pi scale)``."""
        return _utils.broadcast_parameter(F.log(4 * math.pi * self.scale), self._batch_shape)

    def log_prob(self, x):
        """``log(scale) - log(pi) - log((x - loc)^2 + scale^2)``."""
        return -math.log(math.pi) + F.log(self.scale) - F.log((x - self.loc) ** 2 + self.scale**2)

    def cdf(self, x):
        """``arctan((x - loc) / scale) / pi + 1/2``."""
        return F.arctan((x - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, x):
        """``loc + scale tan(pi (x - 1/2))``."""
        return self.loc + self.scale * F.tan((_utils.as_operand(x) - 0.5) * math.pi)

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Cauchy", n)
        eps = _utils.draw(self.loc.xp, "standard_cauchy", (n,) + self._batch_shape, self.loc.dtype)
        return self.scale * eps + self.loc
