"""Initializers drawing from uniform distributions centred on zero.

Each fills an array with draws from U(-s, s); the variance is ``s**2 / 3``.
Every draw comes from ``rng`` when given, else from the array's module
(``numpy.random`` or ``cupy.random``), so ``numpy.random.seed`` makes CPU
initialization reproducible. A fan of zero means an empty array, which is
left as it is; ``max(fan, 1)`` keeps the bound finite there.
"""

from dbr.core.initializers._sampling import fill_uniform
from dbr.core.initializers._scaled import FanOptionDraw, ScaledDraw, SumOfFansDraw
from dbr.core.utils import docstring_tail


class Uniform(ScaledDraw):
    """Fills an array with draws from U(-scale, scale).

    Args:
        scale (float): The bound of the interval.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator with NumPy's ``uniform(low, high,
            size)`` method (``numpy.random.RandomState``, ``Generator`` or
            ``cupy.random.RandomState``); None uses the array's module.
    """

    _draw = staticmethod(fill_uniform)

    def __init__(self, scale=0.05, dtype=None, *, rng=None):
        super().__init__(scale, dtype, rng=rng)


_FAN_SCALED_DOC = """
    Args:
        scale (float): A factor on the bound.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator (see :class:`Uniform`), or None.
"""


@docstring_tail(_FAN_SCALED_DOC)
class LeCunUniform(ScaledDraw):
    """Fills an array with draws from U(-s, s), ``s = scale * sqrt(3 / fan_in)``.

    The variance is then ``scale**2 / fan_in``, as for
    :class:`~dbr.core.initializers.LeCunNormal`. ``fan_in`` is given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: LeCun et al., *Efficient BackProp* (1998).
    """

    _draw = staticmethod(fill_uniform)
    _gain = 3.0


@docstring_tail(_FAN_SCALED_DOC)
class GlorotUniform(SumOfFansDraw):
    """Fills an array with draws from U(-s, s), ``s = scale * sqrt(6 / (fan_in + fan_out))``.

    Also known as Xavier initialization. The fans are given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: Glorot & Bengio, AISTATS 2010.
    """

    _draw = staticmethod(fill_uniform)
    _gain = 6.0


class HeUniform(FanOptionDraw):
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

    _draw = staticmethod(fill_uniform)
    _gain = 6.0
