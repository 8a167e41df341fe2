"""ExponentialShift: multiply an optimizer attribute by a constant rate at every call."""

import numbers

import numpy

from dbr.core.serializers import Deserializer
from dbr.training.extension import Extension


def _check_real(name, value, optional=False):
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        expected = "a real number or None" if optional else "a real number"
        raise TypeError(f"ExponentialShift: expected {name} to be {expected}, got {value!r}")


class ExponentialShift(Extension):
    """Trainer extension that shifts an optimizer attribute exponentially.

    At its ``t``-th call the extension sets ``attr`` of the optimizer to
    ``init * rate ** t``; a ``rate`` below 1 gives the usual exponential decay
    of a learning rate. When ``target`` is given, the value stops there: it
    never goes above it for a growing schedule (``rate > 1``) nor below it
    for a shrinking one (in magnitude, so negative values work too).

    Before training (:meth:`initialize`) the attribute is set to ``init``, or,
    after a resume, to the value the restored call count gives. The default
    trigger is ``(1, 'iteration')``, so ``t`` counts iterations.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        rate (float): the factor applied at every call; must be >= 0.
        init (float): the initial value. If None, the attribute's value when
            the training starts is used.
        target (float): the value at which the shift stops. None: no limit.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, or a number argument is not a real number.
        ValueError: ``rate`` is negative.
    """

    def __init__(self, attr, rate, init=None, target=None, optimizer=None):
        if not isinstance(attr, str):
            raise TypeError(f"ExponentialShift: expected attr to be a str, got {attr!r}")
        _check_real("rate", rate)
        _check_real("init", init, optional=True)
        _check_real("target", target, optional=True)
        if rate < 0:
            raise ValueError(f"ExponentialShift: expected rate >= 0, got {rate!r}")
        self._attr = attr
        self._rate = rate
        self._init = init
        self._target = target
        self._optimizer = optimizer
        self._t = 0
        self._last_value = None

    def initialize(self, trainer):
        """Set the attribute to its initial value, or to the restored one after a resume."""
        optimizer = self._get_optimizer(trainer)
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        if self._last_value is not None:
            self._update_value(optimizer, self._last_value)
        else:
            self._update_value(optimizer, self._init)

    def __call__(self, trainer):
        """Advance the call count and set the attribute to ``init * rate ** t``."""
        self._t += 1
        value = self._init * self._rate**self._t
        if self._target is not None:
            if self._rate > 1:
                if abs(value) > abs(self._target):
                    value = self._target
            elif abs(value) < abs(self._target):
                value = self._target
        self._update_value(self._get_optimizer(trainer), value)

    def serialize(self, serializer):
        """Save or load the call count (``_t``) and the last value set (``_last_value``)."""
        loading = isinstance(serializer, Deserializer)
        self._t = serializer("_t", self._t)
        last = serializer("_last_value", None if loading else self._last_value)
        if loading and not serializer.dry_run:
            self._last_value = None if last is None else numpy.asarray(last).item()

    def _get_optimizer(self, trainer):
        if self._optimizer is not None:
            return self._optimizer
        return trainer.updater.get_optimizer("main")

    def _update_value(self, optimizer, value):
        setattr(optimizer, self._attr, value)
        self._last_value = value
