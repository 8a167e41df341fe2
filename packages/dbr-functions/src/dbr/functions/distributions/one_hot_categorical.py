"""The one-hot categorical distribution."""

from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.categorical import _check_probabilities, _sample_indices
from dbr.functions.distributions.distribution import Distribution, register_kl


class OneHotCategorical(Distribution):
    """The categorical distribution over one-hot vectors: ``P(X = e_i) = p[..., i]``.

    Args:
        p (Variable or array): class probabilities in the last axis (summing
            to 1), floating dtype; the other axes are the batch.

    Samples are one-hot vectors of ``p``'s dtype, not differentiable.
    """

    def __init__(self, p):
        self._p = _utils.as_parameter("OneHotCategorical", "p", p)
        _check_probabilities("OneHotCategorical", "p", self._p)

    @property
    def p(self):
        """Variable: the class probabilities."""
        return self._p

    @cached_property
    def log_p(self):
        """Variable: the log class probabilities."""
        return F.log(self.p)

    @property
    def batch_shape(self):
        """tuple: the shape of ``p`` without its last axis."""
        return self.p.shape[:-1]

    @property
    def event_shape(self):
        """tuple: ``(number of classes,)``."""
        return self.p.shape[-1:]

    @property
    def params(self):
        """dict: ``{'p': p}``."""
        return {"p": self.p}

    @cached_property
    def mean(self):
        """Variable: ``p``."""
        return self.p

    @cached_property
    def variance(self):
        """Variable: ``p (1 - p)``."""
        return self.p * (1.0 - self.p)

    @cached_property
    def entropy(self):
        """Variable: ``-sum_i p_i log p_i``."""
        return -F.sum(_utils.xlogx(self.p), axis=-1)

    def log_prob(self, x):
        """``sum_i x_i log p_i`` for one-hot ``x`` of shape ``sample_shape + p.shape``."""
        return F.sum(self.log_p * x, axis=-1)

    def sample_n(self, n):
        """``n`` one-hot draws per distribution, of shape ``(n,) + p.shape``."""
        n = _utils.check_sample_count("OneHotCategorical", n)
        p = self.p.array
        xp = self.p.xp
        idx = _sample_indices(p, n)
        return as_variable(xp.eye(p.shape[-1], dtype=p.dtype)[idx])


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_one_hot_categorical_one_hot_categorical(p, q):
    return F.sum(p.p * (p.log_p - q.log_p), axis=-1)
