"""IntervalTrigger: fire every ``period`` iterations or epochs."""

import numbers
import warnings

from dbr.core.serializers import Deserializer, stored_keys

_UNITS = ("epoch", "iteration")


def _check_unit(who, unit):
    if unit not in _UNITS:
        raise ValueError(f"{who}: unit must be 'epoch' or 'iteration', got {unit!r}")


def _check_period(who, period, unit):
    if (
        not isinstance(period, numbers.Real)
        or isinstance(period, bool)
        or not period > 0
        or period == float("inf")
    ):
        raise ValueError(f"{who}: period must be a positive finite number, got {period!r}")
    if unit == "iteration" and not float(period).is_integer():
        raise ValueError(
            f"{who}: an 'iteration' period must be a whole number of iterations, got {period!r}"
        )


_UNKNOWN = object()


def _positions(trigger, updater, unit):
    """Return ``(previous, now)``: the span of training a position-based trigger looks at.

    ``now`` is the updater's iteration or ``epoch_detail``. ``previous`` is the
    updater's position one update earlier, or the position ``trigger`` saw at
    its previous call (``trigger._previous_iteration`` /
    ``trigger._previous_epoch_detail``: 0 before the first call, negative
    when unknown after loading a file without it) when that is earlier, so
    that a trigger not called at every iteration misses nothing, and one
    called twice in an iteration answers the same both times.

    An updater whose iterator has no ``previous_epoch_detail`` (user-written
    iterators often lack it), or one that is not a number, falls back, as
    Chainer does, to the position ``trigger`` saw at its previous call (0
    before the first call); then a second call in the same iteration does not
    fire again.
    """
    if unit == "epoch":
        try:
            now = updater.epoch_detail
        except AttributeError as e:
            raise AttributeError(
                f"{type(trigger).__name__}: an 'epoch' trigger needs the updater's "
                f"epoch_detail, which it (or its iterator) does not have: {e}"
            ) from e
        try:
            previous = updater.previous_epoch_detail
        except AttributeError:
            previous = _UNKNOWN
        if previous is None:
            previous = now
        elif previous is _UNKNOWN or not isinstance(previous, numbers.Real):
            previous = max(trigger._previous_epoch_detail, 0.0)
        if 0 <= trigger._previous_epoch_detail < previous:
            previous = trigger._previous_epoch_detail
    else:
        now = updater.iteration
        previous = max(now - 1, 0)
        if 0 <= trigger._previous_iteration < previous:
            previous = trigger._previous_iteration
    return previous, now


def _remember_position(trigger, updater):
    trigger._previous_iteration = updater.iteration
    epoch_detail = getattr(updater, "epoch_detail", None)
    if epoch_detail is not None:
        trigger._previous_epoch_detail = float(epoch_detail)


def _load_optional(owner, serializer, key, value, fallback):
    """``serializer(key, value)``, or None when loading a file that lacks ``key``.

    Chainer's older snapshots saved no trigger state; loading one leaves the
    key out (a :class:`UserWarning` says what the trigger assumes instead,
    ``fallback``) rather than failing. Saving and loading a file that has the
    key are plain ``serializer(key, value)``.
    """
    if isinstance(serializer, Deserializer):
        stored = stored_keys(serializer)
        if stored is not None and key not in stored:
            if not serializer.dry_run:
                warnings.warn(
                    f"{type(owner).__name__}.serialize: the snapshot has no {key!r} "
                    f"(Chainer's older layout); {fallback}",
                    UserWarning,
                    stacklevel=3,
                )
            return None
    return serializer(key, value)


def _serialize_position(trigger, serializer):
    """Save or load the position seen at the last call (Chainer's keys).

    A file without them (Chainer's older layout) sets each to -1: the trigger
    then compares with the updater's previous position, as Chainer does.
    """
    iteration = _load_optional(
        trigger,
        serializer,
        "previous_iteration",
        trigger._previous_iteration,
        "the trigger compares with the previous iteration, and misses what happened "
        "before it if it is not called at every iteration",
    )
    epoch_detail = _load_optional(
        trigger,
        serializer,
        "previous_epoch_detail",
        trigger._previous_epoch_detail,
        "the trigger uses the updater's previous_epoch_detail, and misses what "
        "happened before it if it is not called at every iteration",
    )
    if getattr(serializer, "dry_run", False):
        return  # the checking pass of a load changes nothing
    trigger._previous_iteration = -1 if iteration is None else int(iteration)
    trigger._previous_epoch_detail = -1.0 if epoch_detail is None else float(epoch_detail)


class IntervalTrigger:
    """Trigger that fires each time training crosses a multiple of ``period``.

    With ``unit='iteration'`` it fires at iterations ``period``, ``2 * period``,
    ...; with ``unit='epoch'`` it fires at the first iteration whose
    ``epoch_detail`` reaches or passes a multiple of ``period`` (once per
    crossing, also when batches straddle epoch boundaries).

    The decision compares the updater's position now with its position one
    update earlier (``iteration - 1`` and ``updater.previous_epoch_detail``),
    or with the position seen at this trigger's previous call when that call
    was earlier still (a trigger not called at every iteration does not miss a
    crossing; before its first call, that position is the start of training).
    That position is saved by :meth:`serialize`, so a resumed run fires
    exactly as an uninterrupted one; a file without it (Chainer's older
    layout) loads with a :class:`UserWarning`. When the iterator has no
    ``previous_epoch_detail``, the position seen at the previous call (0
    before the first) is used alone, as in Chainer.

    Args:
        period (int or float): the interval, positive; a whole number for
            ``'iteration'``, possibly fractional for ``'epoch'``.
        unit (str): ``'iteration'`` or ``'epoch'``.

    Raises:
        ValueError: ``unit`` is neither ``'epoch'`` nor ``'iteration'``, or
            ``period`` is not positive.
    """

    def __init__(self, period, unit):
        _check_unit("IntervalTrigger", unit)
        _check_period("IntervalTrigger", period, unit)
        self.period = period
        self.unit = unit
        # The position at the previous call (0 before the first, as in Chainer,
        # so that the first call sees everything since the start); -1 after
        # loading a file without it: the updater's previous position is used.
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0

    def __call__(self, trainer):
        """Return True if training crossed a multiple of the period since the last update."""
        updater = trainer.updater
        previous, now = _positions(self, updater, self.unit)
        _remember_position(self, updater)
        return previous // self.period != now // self.period

    def get_training_length(self):
        """Return ``(period, unit)``: the training length when used as a stop trigger."""
        return self.period, self.unit

    def serialize(self, serializer):
        """Save or load the position seen at the last call (keys ``previous_iteration``,
        ``previous_epoch_detail``)."""
        _serialize_position(self, serializer)

    def __str__(self):
        return f"{type(self).__name__}({self.period}, {self.unit!r})"

    __repr__ = __str__
