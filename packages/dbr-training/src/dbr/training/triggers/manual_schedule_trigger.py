"""ManualScheduleTrigger: fire at chosen iterations or epochs."""

import numbers

from dbr.training.triggers.interval_trigger import (
    _check_unit,
    _load_optional,
    _positions,
    _remember_position,
    _serialize_position,
)


class ManualScheduleTrigger:
    """Trigger that fires when training reaches or passes one of the given points.

    With ``unit='epoch'`` a point ``p`` fires at the first iteration whose
    ``epoch_detail`` is ``>= p`` (once, even when a batch straddles it).
    After the last point has fired, ``finished`` is True, and the trainer does
    not call the ``initialize`` of an extension with a finished trigger.

    Args:
        points (int, float or list of them): the iterations or epochs at which
            to fire.
        unit (str): ``'iteration'`` or ``'epoch'``.

    Attributes:
        points (list): the points.
        unit (str): the unit.
        finished (bool): whether the last point has fired.

    Raises:
        ValueError: the unit is neither ``'epoch'`` nor ``'iteration'``, or
            ``points`` is empty or holds something other than numbers.
    """

    def __init__(self, points, unit):
        _check_unit("ManualScheduleTrigger", unit)
        points = list(points) if isinstance(points, (list, tuple)) else [points]
        if not points or not all(
            isinstance(p, numbers.Real) and not isinstance(p, bool) for p in points
        ):
            raise ValueError(
                f"ManualScheduleTrigger: points must be a number or a non-empty list of "
                f"numbers, got {points!r}"
            )
        self.points = points
        self.unit = unit
        self.finished = False
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0
        # True after loading a file without 'finished': the next call decides it.
        self._finished_unknown = False

    def __call__(self, trainer):
        """Return True if a point lies in (previous position, current position]."""
        updater = trainer.updater
        previous, now = _positions(self, updater, self.unit)
        _remember_position(self, updater)
        fire = any(previous < p <= now for p in self.points)
        if (fire or self._finished_unknown) and now >= max(self.points):
            self.finished = True
        self._finished_unknown = False
        return fire

    def serialize(self, serializer):
        """Save or load the last position seen and ``finished``.

        A file without them (Chainer's older layout) loads with a
        :class:`UserWarning`: the trigger then compares with the updater's
        previous position, and ``finished`` is False until the next call,
        which sets it if training is past the last point.
        """
        _serialize_position(self, serializer)
        finished = _load_optional(
            self,
            serializer,
            "finished",
            self.finished,
            "finished is False until the next call, so that the extension is initialized",
        )
        if getattr(serializer, "dry_run", False):
            return
        self._finished_unknown = finished is None
        self.finished = False if finished is None else bool(finished)
