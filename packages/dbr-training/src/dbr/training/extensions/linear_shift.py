"""LinearShift: move an optimizer attribute linearly between two values over a time range."""

import numbers

import numpy

from dbr.core.serializers import Deserializer
from dbr.training.extension import Extension


def _check_pair(name, value):
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value)
    ):
        raise TypeError(
            f"LinearShift: expected {name} to be a pair of real numbers, got {value!r}"
        )


class LinearShift(Extension):
    """Trainer extension that changes an optimizer attribute linearly.

    With ``value_range = (v1, v2)`` and ``time_range = (t1, t2)``, the value
    after the ``t``-th call is ``v1`` while ``t <= t1``, ``v2`` once
    ``t >= t2``, and ``v1 + (v2 - v1) * (t - t1) / (t2 - t1)`` in between.

    Before training (:meth:`initialize`) the attribute is set to the value
    for ``t = 0``, or, after a resume, to the value for the restored call
    count. The default trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        value_range (tuple of float): ``(v1, v2)``, the first and last values.
        time_range (tuple of int): ``(t1, t2)``, the calls at which the value
            starts and stops changing; ``t1 <= t2``.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, or a range is not a pair of real numbers.
        ValueError: ``t1 > t2``.
    """

    def __init__(self, attr, value_range, time_range, optimizer=None):
        if not isinstance(attr, str):
            raise TypeError(f"LinearShift: expected attr to be a str, got {attr!r}")
        _check_pair("value_range", value_range)
        _check_pair("time_range", time_range)
        if time_range[0] > time_range[1]:
            raise ValueError(
                f"LinearShift: expected time_range (t1, t2) with t1 <= t2, got {time_range!r}"
            )
        self._attr = attr
        self._value_range = tuple(value_range)
        self._time_range = tuple(time_range)
        self._optimizer = optimizer
        self._t = 0
        self._last_value = None

    def initialize(self, trainer):
        """Set the attribute to the value for the current call count (or the restored value)."""
        optimizer = self._get_optimizer(trainer)
        if self._last_value is not None:
            self._update_value(optimizer, self._last_value)
        else:
            self._update_value(optimizer, self._compute_value())

    def __call__(self, trainer):
        """Advance the call count and set the attribute to the interpolated value."""
        self._t += 1
        self._update_value(self._get_optimizer(trainer), self._compute_value())

    def serialize(self, serializer):
        """Save or load the call count (``_t``) and the last value set (``_last_value``)."""
        loading = isinstance(serializer, Deserializer)
        self._t = serializer("_t", self._t)
        last = serializer("_last_value", None if loading else self._last_value)
        if loading and not serializer.dry_run:
            self._last_value = None if last is None else numpy.asarray(last).item()

    def _compute_value(self):
        (t1, t2), (v1, v2) = self._time_range, self._value_range
        if self._t <= t1:
            return v1
        if self._t >= t2:
            return v2
        return v1 + (v2 - v1) * (self._t - t1) / (t2 - t1)

    def _get_optimizer(self, trainer):
        if self._optimizer is not None:
            return self._optimizer
        return trainer.updater.get_optimizer("main")

    def _update_value(self, optimizer, value):
        setattr(optimizer, self._attr, value)
        self._last_value = value
