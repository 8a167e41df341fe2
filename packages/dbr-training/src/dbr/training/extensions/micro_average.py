"""MicroAverage: the ratio of two reported values' sums over an interval."""

from dbr.core import Variable, report
from dbr.training import extension
from dbr.training.triggers import get_trigger


class MicroAverage(extension.Extension):
    """Trainer extension reporting ``sum(numerator) / sum(denominator)`` over an interval.

    At every iteration in which both keys are observed, it adds their values
    to running sums; when ``trigger`` fires (checked only in those
    iterations) it reports the ratio under ``result_key`` and resets the
    sums. For example, with a classifier reporting the number of correct
    predictions and of examples per batch, the result is the accuracy over
    all the examples of the interval, whatever the batch sizes (the
    micro-average), rather than the mean of per-batch accuracies.

    Args:
        numerator_key (str): the observation key of the numerator.
        denominator_key (str): the observation key of the denominator.
        result_key (str): the key under which the ratio is reported.
        trigger: when to report (a trigger or a ``(period, unit)`` tuple);
            ``(1, 'epoch')`` by default.
    """

    priority = extension.PRIORITY_EDITOR

    def __init__(self, numerator_key, denominator_key, result_key, trigger=(1, "epoch")):
        for argname, value in (
            ("numerator_key", numerator_key),
            ("denominator_key", denominator_key),
            ("result_key", result_key),
        ):
            if not isinstance(value, str):
                raise TypeError(
                    f"MicroAverage: expected {argname} to be a str, got {type(value).__name__}"
                )
        self._trigger = get_trigger(trigger)
        self._numerator_key = numerator_key
        self._denominator_key = denominator_key
        self._result_key = result_key
        self._numerator = 0
        self._denominator = 0

    def __call__(self, trainer):
        """Accumulate the two observed values; report their ratio when the trigger fires."""
        observation = trainer.observation
        if self._numerator_key not in observation or self._denominator_key not in observation:
            return
        self._numerator += _value(observation[self._numerator_key])
        self._denominator += _value(observation[self._denominator_key])
        if self._trigger(trainer):
            result = float(self._numerator) / float(self._denominator)
            self._numerator = 0
            self._denominator = 0
            report({self._result_key: result})

    def serialize(self, serializer):
        """Save or load the trigger state (``_trigger/``) and the two running sums."""
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._numerator = serializer("_numerator", self._numerator)
        self._denominator = serializer("_denominator", self._denominator)


def _value(value):
    return value.array if isinstance(value, Variable) else value
