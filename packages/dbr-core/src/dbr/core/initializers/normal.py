"""Initializers drawing from zero-mean normal distributions.

Every draw comes from ``rng`` when given, else from the array's module
(``numpy.random`` or ``cupy.random``), so ``numpy.random.seed`` makes CPU
initialization reproducible. A fan of zero means an empty array, which is
left as it is; ``max(fan, 1)`` keeps the scale finite there.
"""

from dbr.core.initializers._sampling import fill_normal
from dbr.core.initializers._scaled import FanOptionDraw, ScaledDraw, SumOfFansDraw
from dbr.core.utils import docstring_tail


class Normal(ScaledDraw):
    """Fills an array with draws from N(0, scale**2).

    Args:
        scale (float): The standard deviation.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator with NumPy's ``normal(loc, scale,
            size)`` method (``numpy.random.RandomState``, ``Generator`` or
            ``cupy.random.RandomState``); None uses the array's module.
    """

    _draw = staticmethod(fill_normal)

    def __init__(self, scale=0.05, dtype=None, *, rng=None):
        super().__init__(scale, dtype, rng=rng)


_FAN_SCALED_DOC = """
    Args:
        scale (float): A factor on the standard deviation.
        dtype: The dtype the initializer is meant for, or None for any.
        rng: A random number generator (see :class:`Normal`), or None.
"""


@docstring_tail(_FAN_SCALED_DOC)
class LeCunNormal(ScaledDraw):
    """Fills an array with draws from N(0, std**2), ``std = scale * sqrt(1 / fan_in)``.

    ``fan_in`` is given by :func:`~dbr.core.initializers.get_fans`; the array
    must have two or more axes. Reference: LeCun et al., *Efficient BackProp*
    (1998).
    """

    _draw = staticmethod(fill_normal)
    _gain = 1.0


@docstring_tail(_FAN_SCALED_DOC)
class GlorotNormal(SumOfFansDraw):
    """Fills an array with draws from N(0, std**2), ``std = scale * sqrt(2 / (fan_in + fan_out))``.

    Also known as Xavier initialization. The fans are given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: Glorot & Bengio, AISTATS 2010.
    """

    _draw = staticmethod(fill_normal)
    _gain = 2.0


class HeNormal(FanOptionDraw):
    """Fills an array with draws from N(0, std**2), ``std = scale * sqrt(2 / fan)``.

    ``fan`` is the fan-in or the fan-out (``fan_option``) given by
    :func:`~dbr.core.initializers.get_fans`; the array must have two or more
    axes. Reference: He et al., https://arxiv.org/abs/1502.01852.

    Args:
        scale (float): A factor on the standard deviation.
        dtype: The dtype the initializer is meant for, or None for any.
        fan_option (str): ``'fan_in'`` (default) or ``'fan_out'``.
        rng: A random number generator (see :class:`Normal`), or None.
    """

    _draw = staticmethod(fill_normal)
    _gain = 2.0
