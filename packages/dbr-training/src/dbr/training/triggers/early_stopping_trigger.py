"""EarlyStoppingTrigger: stop training when a monitored value stops improving."""

import numbers
import operator
import warnings

from dbr.core import DictSummary
from dbr.training.triggers._trigger_util import get_trigger


class EarlyStoppingTrigger:
    """Stop trigger that fires when ``monitor`` has not improved for ``patience`` checks,
    or when ``max_trigger`` fires.

    At every call the monitored value is accumulated (when reported). When
    ``check_trigger`` fires, the mean since the last check is compared with
    the best so far: a better mean becomes the best and resets the count,
    otherwise the count grows; the trigger fires when the count reaches
    ``patience``.

    Args:
        check_trigger: how often to check; default ``(1, 'epoch')``.
        monitor (str): the observation key to watch; default ``'main/loss'``.
        patience (int): how many checks without improvement to tolerate;
            default 3. (``patients=`` is accepted as an alias, as in Chainer.)
        mode (str): ``'max'`` (larger is better), ``'min'``, or ``'auto'``
            (``'max'`` if ``'accuracy'`` is in ``monitor``, else ``'min'``).
        verbose (bool): print the comparison mode, the count at each check and
            the epoch at which training stops.
        max_trigger: the longest training: a stop trigger or ``(period, unit)``;
            default ``(100, 'epoch')``.

    Attributes:
        count (int): checks since the last improvement.
        best (float): the best mean so far.
        patience (int), monitor (str), verbose (bool): as given.
    """

    def __init__(
        self,
        check_trigger=(1, "epoch"),
        monitor="main/loss",
        patience=3,
        mode="auto",
        verbose=False,
        max_trigger=(100, "epoch"),
        **kwargs,
    ):
        who = "EarlyStoppingTrigger"
        if "patients" in kwargs:
            patients = kwargs.pop("patients")
            if patience != 3 and patients != patience:
                raise TypeError(
                    f"{who}: both patience={patience!r} and its alias patients={patients!r} "
                    f"were given; give only patience"
                )
            patience = patients
        if kwargs:
            raise TypeError(f"{who}: unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        if (
            not isinstance(patience, numbers.Integral)
            or isinstance(patience, bool)
            or patience < 0
        ):
            raise ValueError(f"{who}: patience must be a non-negative int, got {patience!r}")
        if mode not in ("auto", "max", "min"):
            raise ValueError(f"{who}: mode must be 'auto', 'max' or 'min', got {mode!r}")
        if not isinstance(monitor, str):
            raise TypeError(f"{who}: monitor must be a str, got {type(monitor).__name__}")

        self.count = 0
        self.patience = int(patience)
        self.monitor = monitor
        self.verbose = verbose
        self._max_trigger = get_trigger(max_trigger)
        self._interval_trigger = get_trigger(check_trigger)
        self._summary = DictSummary()
        if mode == "auto":
            mode = "max" if "accuracy" in monitor else "min"
        if mode == "max":
            self._compare = operator.gt
            self.best = float("-inf")
        else:
            self._compare = operator.lt
            self.best = float("inf")
        if verbose:
            print(f"early stopping: operator is {'greater' if mode == 'max' else 'less'}")

    def __call__(self, trainer):
        """Return True when training should stop."""
        observation = trainer.observation
        monitor = self.monitor
        if monitor in observation:
            self._summary.add({monitor: observation[monitor]})
        if self._max_trigger(trainer):
            return True
        if not self._interval_trigger(trainer):
            return False
        if monitor not in observation:
            warnings.warn(
                f"EarlyStoppingTrigger: {monitor!r} is not in the observation", stacklevel=2
            )
            return False
        value = float(self._summary.compute_mean()[monitor])
        self._summary = DictSummary()
        if self._compare(value, self.best):
            self.best = value
            self.count = 0
        else:
            self.count += 1
        if self.verbose:
            print(f"current count: {self.count}")
        if self.count >= self.patience:
            if self.verbose:
                print(f"Epoch {trainer.updater.epoch}: early stopping")
            return True
        return False

    def get_training_length(self):
        """Return the training length of ``max_trigger`` (e.g. ``(100, 'epoch')``)."""
        return self._max_trigger.get_training_length()

    def serialize(self, serializer):
        """Save or load ``count``, ``best``, the running summary and the inner triggers."""
        if hasattr(self._max_trigger, "serialize"):
            self._max_trigger.serialize(serializer["max_trigger"])
        if hasattr(self._interval_trigger, "serialize"):
            self._interval_trigger.serialize(serializer["interval_trigger"])
        self._summary.serialize(serializer["summary"])
        self.count = int(serializer("count", self.count))
        self.best = float(serializer("best", self.best))
