"""TimeTrigger: fire every ``period`` seconds of training time."""

import numbers


class TimeTrigger:
    """Trigger that fires once each time ``trainer.elapsed_time`` passes a
    multiple of ``period`` seconds.

    At most one firing per call: after a long pause it fires once and the next
    deadline moves forward by one period.

    Args:
        period (float): the interval in seconds, positive.
    """

    def __init__(self, period):
        if not isinstance(period, numbers.Real) or isinstance(period, bool) or not period > 0:
            raise ValueError(f"TimeTrigger: period must be a positive number, got {period!r}")
        self._period = float(period)
        self._next_time = self._period

    def __call__(self, trainer):
        """Return True if the elapsed training time has passed the next deadline."""
        if self._next_time < trainer.elapsed_time:
            self._next_time += self._period
            return True
        return False

    def serialize(self, serializer):
        """Save or load the next deadline (key ``next_time``)."""
        self._next_time = float(serializer("next_time", self._next_time))
