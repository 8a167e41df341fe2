"""Independent: reinterpret batch axes of a distribution as event axes."""

from functools import cached_property

import numpy

import dbr.functions as F
from dbr.functions.distributions.distribution import Distribution, kl_divergence, register_kl


class Independent(Distribution):
    """A distribution whose trailing batch axes become event axes.

    The last ``reinterpreted_batch_ndims`` axes of ``distribution.batch_shape``
    are treated as independent components of one event: ``log_prob`` and
    ``entropy`` sum over them, ``prob`` and ``cdf`` multiply.

    Args:
        distribution (Distribution): the base distribution.
        reinterpreted_batch_ndims (int): how many trailing batch axes to
            reinterpret; by default all but the first
            (``max(0, len(batch_shape) - 1)``).
    """

    def __init__(self, distribution, reinterpreted_batch_ndims=None):
        if not isinstance(distribution, Distribution):
            raise TypeError(
                "Independent: distribution must be a Distribution, "
                f"got {type(distribution).__name__}"
            )
        batch_ndim = len(distribution.batch_shape)
        if reinterpreted_batch_ndims is None:
            reinterpreted_batch_ndims = max(0, batch_ndim - 1)
        elif (
            isinstance(reinterpreted_batch_ndims, bool)
            or not isinstance(reinterpreted_batch_ndims, (int, numpy.integer))
            or not 0 <= reinterpreted_batch_ndims <= batch_ndim
        ):
            raise ValueError(
                "Independent: reinterpreted_batch_ndims must be an int from 0 to the number "
                f"of batch axes of distribution ({batch_ndim}), got {reinterpreted_batch_ndims!r}"
            )
        self._distribution = distribution
        self._ndims = int(reinterpreted_batch_ndims)
        kept = batch_ndim - self._ndims
        self._batch_shape = distribution.batch_shape[:kept]
        self._event_shape = distribution.batch_shape[kept:] + distribution.event_shape

    @property
    def distribution(self):
        """Distribution: the base distribution."""
        return self._distribution

    @property
    def reinterpreted_batch_ndims(self):
        """int: how many batch axes of the base became event axes."""
        return self._ndims

    @property
    def batch_shape(self):
        """tuple: the base batch shape without the reinterpreted axes."""
        return self._batch_shape

    @property
    def event_shape(self):
        """tuple: the reinterpreted axes followed by the base event shape."""
        return self._event_shape

    def _reduce(self, op, value):
        if self._ndims == 0:
            return value
        return op(value, axis=tuple(range(-self._ndims, 0)))

    @property
    def params(self):
        """dict: the base distribution's parameters."""
        return self.distribution.params

    @property
    def xp(self):
        """The array module of the base distribution."""
        return self.distribution.xp

    @property
    def support(self):
        """str: the base distribution's support."""
        return self.distribution.support

    @property
    def mean(self):
        """Variable: the base distribution's mean."""
        return self.distribution.mean

    @property
    def mode(self):
        """Variable: the base distribution's mode."""
        return self.distribution.mode

    @property
    def stddev(self):
        """Variable: the base distribution's standard deviation."""
        return self.distribution.stddev

    @property
    def variance(self):
        """Variable: the base distribution's variance."""
        return self.distribution.variance

    @property
    def entropy(self):
        """Variable: the base entropies summed over the reinterpreted axes."""
        return self._reduce(F.sum, self.distribution.entropy)

    @cached_property
    def covariance(self):
        """Variable: block-diagonal covariances of the flattened events.

        The base covariances (or variances, for scalar events) of the
        reinterpreted axes become the diagonal blocks of one matrix of size
        ``prod(event_shape)``.
        """
        base = self.distribution
        n = int(numpy.prod(base.batch_shape[len(self._batch_shape) :], dtype=numpy.int64))
        dim = int(numpy.prod(base.event_shape, dtype=numpy.int64))
        if base.event_shape:
            blocks = F.reshape(base.covariance, self._batch_shape + (n, dim, dim))
        else:
            blocks = F.reshape(base.variance, self._batch_shape + (n, 1, 1))
        xp = blocks.xp
        # full[..., i, j, a, b] = blocks[..., i, a, b] if i == j else 0.
        eye = xp.eye(n, dtype=blocks.dtype)
        full = F.expand_dims(blocks, -3) * eye.reshape(n, n, 1, 1)
        k = len(self._batch_shape)
        full = F.transpose(full, tuple(range(k)) + (k, k + 2, k + 1, k + 3))
        return F.reshape(full, self._batch_shape + (n * dim, n * dim))

    def log_prob(self, x):
        """The base log densities summed over the reinterpreted axes."""
        return self._reduce(F.sum, self.distribution.log_prob(x))

    def prob(self, x):
        """The base densities multiplied over the reinterpreted axes."""
        return self._reduce(F.prod, self.distribution.prob(x))

    def cdf(self, x):
        """The base CDFs multiplied over the reinterpreted axes."""
        return self._reduce(F.prod, self.distribution.cdf(x))

    def log_cdf(self, x):
        """The base log CDFs summed over the reinterpreted axes."""
        return self._reduce(F.sum, self.distribution.log_cdf(x))

    def survival_function(self, x):
        """The base survival functions multiplied over the reinterpreted axes."""
        return self._reduce(F.prod, self.distribution.survival_function(x))

    def log_survival_function(self, x):
        """The base log survival functions summed over the reinterpreted axes."""
        return self._reduce(F.sum, self.distribution.log_survival_function(x))

    def perplexity(self, x):
        """The base perplexities multiplied over the reinterpreted axes."""
        return self._reduce(F.prod, self.distribution.perplexity(x))

    def icdf(self, x):
        """Not defined: the CDF of a multivariate event has no inverse."""
        raise RuntimeError(
            "Independent.icdf: the cumulative distribution function of a multivariate "
            "event is not invertible"
        )

    def sample_n(self, n):
        """``n`` draws of the base distribution, of shape ``(n,) + batch_shape + event_shape``."""
        return self.distribution.sample_n(n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"kl_divergence: the event shapes of the Independent distributions differ: "
            f"{p.event_shape} and {q.event_shape}"
        )
    if p.distribution.event_shape != q.distribution.event_shape:
        raise NotImplementedError(
            "kl_divergence: Independent distributions whose base distributions have different "
            "event shapes are not supported"
        )
    kl = kl_divergence(p.distribution, q.distribution)
    n_axes = len(p.event_shape) - len(p.distribution.event_shape)
    if n_axes == 0:
        return kl
    return F.sum(kl, axis=tuple(range(-n_axes, 0)))
