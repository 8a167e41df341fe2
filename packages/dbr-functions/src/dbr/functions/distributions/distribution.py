"""The base class of probability distributions and the registry of KL divergences."""

import numpy

from dbr.core import backend


class Distribution:
    """A batch of probability distributions of the same family (Chainer's ``Distribution``).

    A distribution holds a batch of parameter sets: :attr:`batch_shape` is the
    shape of that batch and :attr:`event_shape` the shape of one draw, so a
    sample of ``sample_shape`` has shape ``sample_shape + batch_shape +
    event_shape``. Parameters are Variables; statistics (``mean``,
    ``entropy``, ...) and densities (``log_prob(x)``, ...) are Variables built
    from differentiable functions, so gradients flow back to the parameters.
    A family implements only the members that are defined for it; the others
    raise ``NotImplementedError``.
    """

    def _unsupported(self, what):
        return NotImplementedError(f"{type(self).__name__} does not implement {what}")

    @property
    def batch_shape(self):
        """tuple: the shape of the batch of distributions."""
        raise self._unsupported("batch_shape")

    @property
    def event_shape(self):
        """tuple: the shape of one draw from one distribution."""
        raise self._unsupported("event_shape")

    @property
    def params(self):
        """dict: the parameters (name to Variable) that define the distributions."""
        raise self._unsupported("params")

    @property
    def covariance(self):
        """Variable: the covariance matrices, of shape ``batch_shape + event_shape * 2``."""
        raise self._unsupported("covariance")

    @property
    def entropy(self):
        """Variable: the entropy of each distribution, of shape ``batch_shape``."""
        raise self._unsupported("entropy")

    @property
    def mean(self):
        """Variable: the mean, of shape ``batch_shape + event_shape``."""
        raise self._unsupported("mean")

    @property
    def mode(self):
        """Variable: the mode, of shape ``batch_shape + event_shape``."""
        raise self._unsupported("mode")

    @property
    def stddev(self):
        """Variable: the standard deviation, of shape ``batch_shape + event_shape``."""
        raise self._unsupported("stddev")

    @property
    def support(self):
        """str: a description of the set of values a draw can take."""
        raise self._unsupported("support")

    @property
    def variance(self):
        """Variable: the variance, of shape ``batch_shape + event_shape``."""
        raise self._unsupported("variance")

    @property
    def xp(self):
        """The array module (NumPy or CuPy) of the parameters."""
        return backend.get_array_module(*self.params.values())

    def cdf(self, x):
        """The cumulative distribution function ``P(X <= x)``, elementwise in ``x``."""
        raise self._unsupported("cdf")

    def icdf(self, x):
        """The inverse of :meth:`cdf`: the value whose cumulative probability is ``x``."""
        raise self._unsupported("icdf")

    def log_cdf(self, x):
        """The logarithm of :meth:`cdf`."""
        raise self._unsupported("log_cdf")

    def log_prob(self, x):
        """The logarithm of the probability (density or mass) of ``x``.

        Args:
            x (Variable or array): values of shape ``sample_shape + batch_shape
                + event_shape``.

        Returns:
            Variable: of shape ``sample_shape + batch_shape``.
        """
        raise self._unsupported("log_prob")

    def log_survival_function(self, x):
        """The logarithm of :meth:`survival_function`."""
        raise self._unsupported("log_survival_function")

    def perplexity(self, x):
        """The perplexity ``exp(-log_prob(x))``."""
        raise self._unsupported("perplexity")

    def prob(self, x):
        """The probability (density or mass) of ``x``; see :meth:`log_prob`."""
        raise self._unsupported("prob")

    def survival_function(self, x):
        """The survival function ``P(X > x) = 1 - cdf(x)``."""
        raise self._unsupported("survival_function")

    def sample_n(self, n):
        """Draw ``n`` samples from each distribution.

        Returns:
            Variable: of shape ``(n,) + batch_shape + event_shape``.
        """
        raise self._unsupported("sample_n")

    def sample(self, sample_shape=()):
        """Draw samples of shape ``sample_shape + batch_shape + event_shape``.

        Args:
            sample_shape (int or tuple of ints): the shape of the sample per
                distribution; an int ``n`` means ``(n,)``, ``()`` one draw.

        Returns:
            Variable: the samples. Families with a reparameterised sampler
            (Normal, Uniform, ...) return a Variable connected to the
            parameters, so that gradients flow through the draw.
        """
        if isinstance(sample_shape, (int, numpy.integer)) and not isinstance(sample_shape, bool):
            sample_shape = (int(sample_shape),)
        elif isinstance(sample_shape, (tuple, list)) and all(
            isinstance(s, (int, numpy.integer)) and not isinstance(s, bool) for s in sample_shape
        ):
            sample_shape = tuple(int(s) for s in sample_shape)
        else:
            raise TypeError(
                f"{type(self).__name__}.sample: sample_shape must be an int or a tuple of ints, "
                f"got {sample_shape!r}"
            )
        if any(s < 0 for s in sample_shape):
            raise ValueError(
                f"{type(self).__name__}.sample: sample_shape must not be negative, "
                f"got {sample_shape}"
            )
        n = 1
        for s in sample_shape:
            n *= s
        return self.sample_n(n).reshape(sample_shape + self.batch_shape + self.event_shape)


_KL_DIVERGENCE = {}


def register_kl(Dist1, Dist2):  # Chainer's argument names
    """A decorator registering a function as the KL divergence ``KL(Dist1 || Dist2)``.

    The decorated function takes a ``Dist1`` and a ``Dist2`` instance and
    returns their KL divergence, of shape ``batch_shape``;
    :func:`kl_divergence` looks it up by the two exact types.

    >>> from dbr.functions.distributions import Distribution, kl_divergence, register_kl
    >>> class Point(Distribution):
    ...     pass
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return 0.0
    >>> kl_divergence(Point(), Point())
    0.0
    """
    for name, cls in (("Dist1", Dist1), ("Dist2", Dist2)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"register_kl: {name} must be a Distribution subclass, got {cls!r}")

    def register(kl):
        _KL_DIVERGENCE[Dist1, Dist2] = kl
        return kl

    return register


def kl_divergence(dist1, dist2):
    """The Kullback-Leibler divergence ``KL(dist1 || dist2) = E_dist1[log dist1 - log dist2]``.

    Args:
        dist1 (Distribution): the distribution the expectation is over.
        dist2 (Distribution): the other one, of the same batch shape.

    Returns:
        Variable: the divergence of each pair, of shape ``batch_shape``.

    Raises:
        NotImplementedError: when no divergence is registered for the pair
            of types (see :func:`register_kl`).
    """
    try:
        kl = _KL_DIVERGENCE[type(dist1), type(dist2)]
    except KeyError:
        raise NotImplementedError(
            f"kl_divergence: no KL divergence is registered between "
            f"{type(dist1).__name__} and {type(dist2).__name__}"
        ) from None
    return kl(dist1, dist2)


def cross_entropy(dist1, dist2):
    """The cross entropy ``H(dist1, dist2) = H(dist1) + KL(dist1 || dist2)``.

    Returns:
        Variable: of shape ``batch_shape``.
    """
    return dist1.entropy + kl_divergence(dist1, dist2)
