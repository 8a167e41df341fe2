"""The multivariate normal distribution, parameterised by a Cholesky factor."""

import math
from functools import cached_property

import dbr.functions as F
from dbr.core import as_variable
from dbr.functions.distributions import _utils
from dbr.functions.distributions.distribution import Distribution, register_kl

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_HALF_LOG_2PIE = 0.5 * math.log(2 * math.pi * math.e)


def _lower(matrix):
    """The lower triangle of each matrix in the last two axes (the rest zeroed)."""
    return _triangle(matrix, lower=True)


def _triangle(matrix, lower):
    """The lower (or upper) triangle of each matrix in the last two axes (the rest zeroed)."""
    xp = matrix.xp
    d = matrix.shape[-1]
    ones = xp.ones((d, d), matrix.dtype)
    return matrix * (xp.tril(ones) if lower else xp.triu(ones))


def _triangular_inv(matrix, lower=True):
    """The inverses of triangular matrices ``(..., d, d)``.

    Only the lower (``lower=True``) or upper triangle is read, so the gradient
    is zero outside it.
    """
    matrix = as_variable(matrix)
    d = matrix.shape[-1]
    flat = F.reshape(_triangle(matrix, lower), (math.prod(matrix.shape[:-2]), d, d))
    return F.reshape(F.batch_inv(flat), matrix.shape)


class MultivariateNormal(Distribution):
    """The multivariate normal ``N(loc, L L^T)`` with a lower-triangular ``L``.

    Args:
        loc (Variable or array): the means, of shape ``batch_shape + (d,)``,
            floating dtype.
        scale_tril (Variable or array): the Cholesky factors ``L`` (lower
            triangular, positive diagonal), of shape ``batch_shape + (d, d)``
            and ``loc``'s dtype; keyword only, required. Only the lower
            triangle is read.

    Samples are reparameterised (``loc + L eps``, ``eps ~ N(0, I)``).
    """

    def __init__(self, loc, *, scale_tril=None):
        if scale_tril is None:
            raise ValueError("MultivariateNormal: scale_tril must have a value")
        self._loc = _utils.as_parameter("MultivariateNormal", "loc", loc)
        self._scale_tril = _utils.as_parameter("MultivariateNormal", "scale_tril", scale_tril)
        loc, tril = self._loc, self._scale_tril
        if tril.dtype != loc.dtype:
            raise TypeError(
                f"MultivariateNormal: scale_tril must have the dtype of loc ({loc.dtype}), "
                f"got {tril.dtype}"
            )
        if loc.ndim < 1 or tril.shape != loc.shape + loc.shape[-1:]:
            raise ValueError(
                "MultivariateNormal: loc must have shape batch_shape + (d,) and scale_tril "
                f"batch_shape + (d, d), got loc {loc.shape} and scale_tril {tril.shape}"
            )

    @property
    def loc(self):
        """Variable: the means."""
        return self._loc

    @property
    def scale_tril(self):
        """Variable: the Cholesky factors of the covariances."""
        return self._scale_tril

    @property
    def d(self):
        """int: the dimension of the events."""
        return self.scale_tril.shape[-1]

    @cached_property
    def _logdet_scale(self):
        diag = F.diagonal(self.scale_tril, axis1=-2, axis2=-1)
        return F.sum(F.log(abs(diag)), axis=-1)

    @cached_property
    def _scale_tril_inv(self):
        return _triangular_inv(self.scale_tril)

    @property
    def batch_shape(self):
        """tuple: the shape of ``loc`` without its last axis."""
        return self.loc.shape[:-1]

    @property
    def event_shape(self):
        """tuple: ``(d,)``."""
        return self.loc.shape[-1:]

    @property
    def params(self):
        """dict: ``{'loc': loc, 'scale_tril': scale_tril}``."""
        return {"loc": self.loc, "scale_tril": self.scale_tril}

    @property
    def support(self):
        """str: ``'real'``."""
        return "real"

    @cached_property
    def mean(self):
        """Variable: ``loc``."""
        return self.loc

    @property
    def covariance(self):
        """Variable: ``L L^T``, of shape ``batch_shape + (d, d)``."""
        tril = _lower(self.scale_tril)
        return F.matmul(tril, F.swapaxes(tril, -1, -2))

    @cached_property
    def variance(self):
        """Variable: the diagonal of the covariance, ``sum_j L_ij^2``."""
        return F.sum(_lower(self.scale_tril) ** 2, axis=-1)

    @cached_property
    def stddev(self):
        """Variable: the square root of :attr:`variance`."""
        return F.sqrt(self.variance)

    @cached_property
    def entropy(self):
        """Variable: ``log|det L| + d log(2 pi e) / 2``."""
        return self._logdet_scale + _HALF_LOG_2PIE * self.d

    def log_prob(self, x):
        """``-|L^-1 (x - loc)|^2 / 2 - log|det L| - d log(2 pi) / 2``.

        Args:
            x (Variable or array): of shape ``sample_shape + batch_shape + (d,)``.
        """
        diff = x - self.loc
        z = F.matmul(
            F.broadcast_to(self._scale_tril_inv, diff.shape + (self.d,)),
            F.expand_dims(diff, -1),
        )
        mahalanobis = F.sum(z**2, axis=(-2, -1))
        log_z = -_LOG_SQRT_2PI * self.d - self._logdet_scale
        return F.broadcast_to(log_z, mahalanobis.shape) - 0.5 * mahalanobis

    def sample_n(self, n):
        """``n`` reparameterised draws, of shape ``(n,) + batch_shape + (d,)``."""
        n = _utils.check_sample_count("MultivariateNormal", n)
        eps = _utils.draw(
            self.loc.xp, "standard_normal", (n,) + self.loc.shape + (1,), self.loc.dtype
        )
        tril = F.broadcast_to(_lower(self.scale_tril), (n,) + self.scale_tril.shape)
        return self.loc + F.squeeze(F.matmul(tril, eps), axis=-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariate_normal_multivariate_normal(p, q):
    q_inv = q._scale_tril_inv
    trace = F.sum(F.matmul(q_inv, _lower(p.scale_tril)) ** 2, axis=(-2, -1))
    mahalanobis = F.sum(F.matmul(q_inv, F.expand_dims(p.loc - q.loc, -1)) ** 2, axis=(-2, -1))
    return q._logdet_scale - p._logdet_scale + 0.5 * trace + 0.5 * mahalanobis - 0.5 * p.d
