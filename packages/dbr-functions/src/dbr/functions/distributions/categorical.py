"""The categorical distribution over class indices."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl


def _check_probabilities(owner, name, p):
    if p.ndim == 0:
        raise ValueError(f"{owner}: {name} must have a class axis (the last), got shape ()")


class Categorical(Distribution):
    """The categorical distribution: ``P(X = i) = p[..., i]``.

    Args:
        p (Variable or array): class probabilities in the last axis (summing
            to 1), floating dtype; the other axes are the batch.
        logit (Variable or array): unnormalised log probabilities instead,
            keyword only (``p = softmax(logit)``); give exactly one.

    Samples are class indices (integers), not differentiable.
    """

    def __init__(self, p=None, *, logit=None):
        if (p is None) == (logit is None):
            raise ValueError("Categorical: give exactly one of p and logit")
        if p is not None:
            self._p = _utils.as_parameter("Categorical", "p", p)
            self._logit = None
            _check_probabilities("Categorical", "p", self._p)
        else:
            self._logit = _utils.as_parameter("Categorical", "logit", logit)
            self._p = None
            _check_probabilities("Categorical", "logit", self._logit)

    @cached_property
    def p(self):
        """Variable: the class probabilities."""
        return self._p if self._p is not None else F.exp(self.log_p)

    @cached_property
    def log_p(self):
        """Variable: the log class probabilities."""
        if self._p is not None:
            return F.log(self._p)
        return F.log_softmax(self._logit, axis=-1)

    @property
    def batch_shape(self):
        """tuple: the shape of ``p`` without its last axis."""
        return (self._p if self._p is not None else self._logit).shape[:-1]

    @property
    def event_shape(self):
        """tuple: ``()``."""
        return ()

    @property
    def params(self):
        """dict: ``{'p': p}``."""
        return {"p": self.p}

    @cached_property
    def entropy(self):
        """Variable: ``-sum_i p_i log p_i``."""
        return -F.sum(_utils.xlogx(self.p), axis=-1)

    def log_prob(self, x):
        """``log p[..., x]``: the log probability of the class indices ``x``.

        Args:
            x (Variable or array): class indices (cast to int32) of shape
                ``sample_shape + batch_shape``.
        """
        x = _utils.array_of(x).astype(numpy.int32, copy=False)
        xp = self.log_p.xp
        batch = self.batch_shape
        if x.shape[x.ndim - len(batch) :] != batch:
            raise ValueError(
                f"Categorical.log_prob: x must have shape sample_shape + {batch}, got {x.shape}"
            )
        grids = xp.meshgrid(*(xp.arange(s) for s in batch), indexing="ij") if batch else []
        return self.log_p[tuple(grids) + (x,)]

    def sample_n(self, n):
        """``n`` class indices per distribution, of shape ``(n,) + batch_shape``."""
        n = _utils.check_sample_count("Categorical", n)
        return as_variable(_sample_indices(self.p.array, n))


def _sample_indices(p, n):
    """``n`` indices drawn from each row of the probabilities ``p`` (last axis)."""
    xp = _utils.xp_of(p)
    rows = p.reshape(-1, p.shape[-1]).astype(numpy.float64)
    rows = rows / rows.sum(axis=-1, keepdims=True)
    # Inverse-CDF sampling draws every row at once (xp.random.choice takes one p).
    u = xp.random.uniform(0, 1, (rows.shape[0], n))
    cdf = xp.cumsum(rows, axis=-1)
    cdf[:, -1] = 1.0
    idx = (u[:, :, None] >= cdf[:, None, :]).sum(axis=-1)
    idx = xp.minimum(idx, p.shape[-1] - 1)
    return idx.T.reshape((n,) + p.shape[:-1])


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    return F.sum(p.p * (p.log_p - q.log_p), axis=-1)
