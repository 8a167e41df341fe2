"""The base of the random initializers: a draw whose spread is a scale, or a scale on a fan."""

import math

from dbr.core.initializers.fans import _check_fan_option, _get_fan, get_fans
from dbr.core.initializers.initializer import Initializer


class ScaledDraw(Initializer):
    """Fills an array by ``_draw(array, spread, rng)``.

    ``spread`` is ``scale`` when ``_gain`` is None, else ``scale * sqrt(_gain /
    max(fan, 1))`` with ``fan = _fan(array.shape)`` (the fan-in unless a subclass
    says otherwise). Subclasses set ``_draw`` (``fill_normal`` or ``fill_uniform``
    of :mod:`dbr.core.initializers._sampling`) and ``_gain``.
    """

    _draw = None
    _gain = None

    def __init__(self, scale=1.0, dtype=None, *, rng=None):
        super().__init__(dtype)
        self.scale = scale
        self.rng = rng

    def _fan(self, shape):
        return get_fans(shape)[0]

    def _fill(self, array):
        spread = self.scale
        if self._gain is not None:
            spread = self.scale * math.sqrt(self._gain / max(self._fan(array.shape), 1))
        self._draw(array, spread, self.rng)


class SumOfFansDraw(ScaledDraw):
    """A :class:`ScaledDraw` whose fan is ``fan_in + fan_out`` (Glorot's)."""

    def _fan(self, shape):
        return sum(get_fans(shape))


class FanOptionDraw(ScaledDraw):
    """A :class:`ScaledDraw` whose fan is the fan-in or the fan-out, as ``fan_option`` says."""

    def __init__(self, scale=1.0, dtype=None, fan_option="fan_in", *, rng=None):
        Initializer.__init__(self, dtype)
        self.scale = scale
        self.fan_option = _check_fan_option(fan_option)
        self.rng = rng

    def _fan(self, shape):
        return _get_fan(shape, self.fan_option)
