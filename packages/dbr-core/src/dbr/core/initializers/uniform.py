"""Initializers drawing from uniform distributions centred on zero.

Each fills an array with draws from U(-s, s); the variance is ``s**2 / 3``.
Every draw comes from ``rng`` when given, else from the array's module
(``numpy.random`` or ``cupy.random``), so ``numpy.random.seed`` makes CPU
initialization reproducible. A fan of zero means an empty array, which is
left as it is; ``max(fan, 1)`` keeps the bound finite there.
"""

import math

from dbr.core.initializers._sampling import fill_uniform
from dbr.core.initializers.fans import _check_fan_option, _get_fan, get_fans
from dbr.core.initializers.initializer import Initializer


class Uniform(Initializer):
    """Fills an array with draws from U(-scale, scale).

    Args:
        scale (float): The bound of the interval.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator with NumPy's ``uniform(low, high,
            size)`` method (``numpy.random.RandomState``, ``Generator`` or
            ``cupy.random.RandomState``); None uses the array's module.
    """

    def __init__(self, scale=0.05, dtype=None, *, rng=None):
        super().__init__(dtype)
        self.scale = scale
        self.rng = rng

    def _fill(self, array):
        fill_uniform(array, self.scale, self.rng)


class LeCunUniform(Initializer):
    """Fills an array with draws from U(-s, s), ``s = scale * sqrt(3 / fan_in)``.

    The variance is then ``scale**2 / fan_in``, as for
    :class:`~dbr.core.initializers.LeCunNormal`. ``fan_in`` is given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: LeCun et al., *Efficient BackProp* (1998).

    Args:
        scale (float): A factor on the bound.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator (see :class:`Uniform`), or None.
    """

    def __init__(self, scale=1.0, dtype=None, *, rng=None):
        super().__init__(dtype)
        self.scale = scale
        self.rng = rng

    def _fill(self, array):
        fan_in, _ = get_fans(array.shape)
        fill_uniform(array, self.scale * math.sqrt(3.0 / max(fan_in, 1)), self.rng)


class GlorotUniform(Initializer):
    """Fills an array with draws from U(-s, s), ``s = scale * sqrt(6 / (fan_in + fan_out))``.

    Also known as Xavier initialization. The fans are given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: Glorot & Bengio, AISTATS 2010.

    Args:
        scale (float): A factor on the bound.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator (see :class:`Uniform`), or None.
    """

    def __init__(self, scale=1.0, dtype=None, *, rng=None):
        super().__init__(dtype)
        self.scale = scale
        self.rng = rng

    def _fill(self, array):
        fan_in, fan_out = get_fans(array.shape)
        bound = self.scale * math.sqrt(6.0 / max(fan_in + fan_out, 1))
        fill_uniform(array, bound, self.rng)


class HeUniform(Initializer):
    """Fills an array with draws from U(-s, s), ``s = scale * sqrt(6 / fan)``.

    ``fan`` is the fan-in or the fan-out (``fan_option``) given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: He et al., https://arxiv.org/abs/1502.01852.

    Args:
        scale (float): A factor on the bound.
        dtype: The dtype the initializer is meant for, or None for any.
        fan_option (str): ``'fan_in'`` (default) or ``'fan_out'``.
        rng: A random number generator (see :class:`Uniform`), or None.
    """

    def __init__(self, scale=1.0, dtype=None, fan_option="fan_in", *, rng=None):
        super().__init__(dtype)
        self.scale = scale
        self.fan_option = _check_fan_option(fan_option)
        self.rng = rng

    def _fill(self, array):
        fan = _get_fan(array.shape, self.fan_option)
        fill_uniform(array, self.scale * math.sqrt(6.0 / max(fan, 1)), self.rng)
