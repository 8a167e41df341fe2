"""get_trigger: turn the trigger specifications accepted across the API into triggers."""

from dbr.training.triggers.interval_trigger import IntervalTrigger


def _never_fire_trigger(trainer):
    return False


def get_trigger(trigger):
    """Return a trigger object for ``trigger``.

    Args:
        trigger: None (a trigger that never fires), a callable
            ``trigger(trainer) -> bool`` (returned as it is), or a
            ``(period, unit)`` tuple (an :class:`IntervalTrigger`).

    Raises:
        TypeError: ``trigger`` is none of these.
        ValueError: the tuple's unit or period is invalid.
    """
    if trigger is None:
        return _never_fire_trigger
    if callable(trigger):
        return trigger
    if isinstance(trigger, (tuple, list)) and len(trigger) == 2:
        return IntervalTrigger(*trigger)
    raise TypeError(
        f"get_trigger: expected None, a callable trigger or a (period, unit) tuple, "
        f"got {trigger!r} ({type(trigger).__name__})"
    )
