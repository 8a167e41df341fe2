"""PolynomialShift: decay an optimizer attribute polynomially to zero over ``max_count`` calls."""

import math
import numbers

import numpy

from dbr.core.serializers import Deserializer
from dbr.training.extension import Extension


def _check_real(name, value, optional=False):
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        expected = "a real number or None" if optional else "a real number"
        raise TypeError(f"PolynomialShift: expected {name} to be {expected}, got {value!r}")


class PolynomialShift(Extension):
    """Trainer extension that shifts an optimizer attribute polynomially.

    After its ``t``-th call the extension sets ``attr`` to
    ``init * max(1 - t / max_count, 0) ** rate``: with ``rate > 0`` the value
    decays to zero at the ``max_count``-th call (the "poly" learning-rate
    policy). When ``target`` is given, the value stops there: never below it
    (in magnitude) for ``rate > 0``, never above it for ``rate <= 0``. A
    negative ``rate`` grows without bound at ``max_count`` (the value becomes
    infinite unless ``target`` stops it).

    Before training (:meth:`initialize`) the attribute is set to ``init``, or,
    after a resume, to the value for the restored call count. The default
    trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        rate (float): the exponent of the polynomial.
        max_count (int): the number of calls after which the decay factor is 0 (>= 1).
        init (float): the initial value. If None, the attribute's value when
            the training starts is used.
        target (float): the value at which the shift stops. None: no limit.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, ``max_count`` is not an int, or a
            number argument is not a real number.
        ValueError: ``max_count`` is below 1.
    """

    def __init__(self, attr, rate, max_count, init=None, target=None, optimizer=None):
        if not isinstance(attr, str):
            raise TypeError(f"PolynomialShift: expected attr to be a str, got {attr!r}")
        _check_real("rate", rate)
        _check_real("init", init, optional=True)
        _check_real("target", target, optional=True)
        if isinstance(max_count, bool) or not isinstance(max_count, numbers.Integral):
            raise TypeError(f"PolynomialShift: expected max_count to be an int, got {max_count!r}")
        if max_count < 1:
            raise ValueError(f"PolynomialShift: expected max_count >= 1, got {max_count!r}")
        self._attr = attr
        self._rate = rate
        self._max_count = int(max_count)
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
        """Advance the call count and set the attribute to ``init * decay ** rate``."""
        self._t += 1
        decay = max(1 - self._t / self._max_count, 0)
        if decay == 0 and self._rate < 0:
            value = math.copysign(math.inf, self._init) if self._init else 0.0
        else:
            value = self._init * decay**self._rate
        if self._target is not None:
            if self._rate > 0:
                if abs(value) < abs(self._target):
                    value = self._target
            elif abs(value) > abs(self._target):
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
