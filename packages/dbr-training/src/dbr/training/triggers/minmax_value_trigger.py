"""Triggers that fire when a reported value reaches its best so far."""

from dbr.core import DictSummary
from dbr.core.serializers import Deserializer
from dbr.training.triggers._trigger_util import get_trigger


class BestValueTrigger:
    """Trigger that fires when the mean of a reported value is the best so far.

    At every call it accumulates ``trainer.observation[key]`` (when present);
    when ``trigger`` fires it takes the mean of what was accumulated since the
    last check, and fires if ``compare(best_value, mean)`` says the mean is
    better than the best so far (always, at the first check).

    Args:
        key (str): the observation key to watch (e.g. ``'validation/main/loss'``).
        compare: ``compare(best_value, new_value) -> bool``, True when
            ``new_value`` is better.
        trigger: how often to check (anything :func:`get_trigger` accepts);
            default ``(1, 'epoch')``.

    Raises:
        KeyError: when called, if ``key`` was not reported since the last check.
    """

    def __init__(self, key, compare, trigger=(1, "epoch")):
        if not isinstance(key, str):
            raise TypeError(f"{type(self).__name__}: key must be a str, got {type(key).__name__}")
        if not callable(compare):
            raise TypeError(
                f"{type(self).__name__}: compare must be callable, got {type(compare).__name__}"
            )
        self._key = key
        self._compare = compare
        self._best_value = None
        self._interval_trigger = get_trigger(trigger)
        self._summary = DictSummary()

    def __call__(self, trainer):
        """Accumulate the watched value; at a check, return whether its mean is the best."""
        key = self._key
        observation = trainer.observation
        if key in observation:
            self._summary.add({key: observation[key]})
        if not self._interval_trigger(trainer):
            return False
        means = self._summary.compute_mean()
        if key not in means:
            raise KeyError(
                f"{type(self).__name__}: key {key!r} was not reported since the last check "
                f"(observed keys: {sorted(observation)})"
            )
        value = float(means[key])
        self._summary = DictSummary()
        if self._best_value is None or self._compare(self._best_value, value):
            self._best_value = value
            return True
        return False

    def serialize(self, serializer):
        """Save or load the check trigger ('interval_trigger'), the running
        summary ('summary') and the best value ('best_value')."""
        if hasattr(self._interval_trigger, "serialize"):
            self._interval_trigger.serialize(serializer["interval_trigger"])
        self._summary.serialize(serializer["summary"])
        if isinstance(serializer, Deserializer):
            # None as the target accepts a stored number as well as a stored None.
            best = serializer("best_value", None)
            if not serializer.dry_run:
                self._best_value = None if best is None else float(best)
        else:
            serializer("best_value", self._best_value)


def _greater(best_value, new_value):
    return new_value > best_value


def _less(best_value, new_value):
    return new_value < best_value


class MaxValueTrigger(BestValueTrigger):
    """Trigger that fires when the mean of ``key`` is the largest so far.

    Args:
        key (str): the observation key to watch.
        trigger: how often to check; default ``(1, 'epoch')``.
    """

    def __init__(self, key, trigger=(1, "epoch")):
        super().__init__(key, _greater, trigger)


class MinValueTrigger(BestValueTrigger):
    """Trigger that fires when the mean of ``key`` is the smallest so far.

    Args:
        key (str): the observation key to watch.
        trigger: how often to check; default ``(1, 'epoch')``.
    """

    def __init__(self, key, trigger=(1, "epoch")):
        super().__init__(key, _less, trigger)
