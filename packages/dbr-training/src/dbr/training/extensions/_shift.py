"""What the shift extensions share: the base class, the target clamp and the argument checks."""

import numbers

import numpy

from dbr.core.serializers import Deserializer
from dbr.training.extension import Extension


def check_arguments(owner, attr, reals=None, optional_reals=None):
    """Check a shift's common arguments, raising TypeError that names ``owner`` (the class).

    ``attr`` must be a str, each value of the dict ``reals`` a real number and
    each value of ``optional_reals`` a real number or None; the dicts map the
    argument names used in the messages to the values, checked in order.
    """
    if not isinstance(attr, str):
        raise TypeError(f"{owner}: expected attr to be a str, got {attr!r}")
    for name, value in (reals or {}).items():
        _check_real(owner, name, value, optional=False)
    for name, value in (optional_reals or {}).items():
        _check_real(owner, name, value, optional=True)


def _check_real(owner, name, value, optional):
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        expected = "a real number or None" if optional else "a real number"
        raise TypeError(f"{owner}: expected {name} to be {expected}, got {value!r}")


def check_int(owner, name, value, minimum):
    """Raise TypeError naming ``owner`` unless ``value`` is an int, ValueError if < ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: expected {name} to be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{owner}: expected {name} >= {minimum}, got {value!r}")


def clamp(value, target, grows):
    """Stop ``value`` at ``target`` (None: no limit), comparing magnitudes.

    A growing schedule (``grows``) never goes above ``target``, a shrinking one
    never below it.
    """
    if target is not None:
        if grows:
            if abs(value) > abs(target):
                return target
        elif abs(value) < abs(target):
            return target
    return value


class _Shift(Extension):
    """Base of the shift extensions: sets one optimizer attribute after every call.

    A subclass implements ``_value(t)``, the value after the ``t``-th call.
    Before training the attribute is set to ``_start_value(optimizer)``
    (``init``, read from the optimizer when None), or, after a resume, to the
    last value set. The call count ``_t`` and the last value ``_last_value``
    are saved, under those keys, as Chainer saves them.

    Args:
        attr (str): name of the optimizer attribute to shift.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.
        init (float): the initial value (None: the attribute's value when
            the training starts).
        target (float): the value at which a subclass's schedule stops
            (None: no limit; see :func:`clamp`).
    """

    def __init__(self, attr, optimizer, init=None, target=None):
        self._attr = attr
        self._optimizer = optimizer
        self._init = init
        self._target = target
        self._t = 0
        self._last_value = None

    def initialize(self, trainer):
        """Set the attribute to its initial value, or to the restored one after a resume."""
        optimizer = self._get_optimizer(trainer)
        start = self._start_value(optimizer)
        self._update_value(optimizer, start if self._last_value is None else self._last_value)

    def __call__(self, trainer):
        """Advance the call count and set the attribute to the schedule's value for it."""
        self._t += 1
        self._update_value(self._get_optimizer(trainer), self._value(self._t))

    def serialize(self, serializer):
        """Save or load the call count (``_t``) and the last value set (``_last_value``)."""
        loading = isinstance(serializer, Deserializer)
        self._t = serializer("_t", self._t)
        last = serializer("_last_value", None if loading else self._last_value)
        if loading and not serializer.dry_run:
            self._last_value = None if last is None else numpy.asarray(last).item()

    def _value(self, t):
        raise NotImplementedError(f"{type(self).__name__} must implement _value(t)")

    def _start_value(self, optimizer):
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        return self._init

    def _get_optimizer(self, trainer):
        if self._optimizer is not None:
            return self._optimizer
        return trainer.updater.get_optimizer("main")

    def _update_value(self, optimizer, value):
        setattr(optimizer, self._attr, value)
        self._last_value = value
