"""MultistepShift: multiply an optimizer attribute by a factor at chosen calls."""

import numbers

import numpy

from dbr.core.serializers import Deserializer
from dbr.training.extension import Extension


class MultistepShift(Extension):
    """Trainer extension that shifts an optimizer attribute at given milestones.

    With ``step_value = (s1, s2, ...)``, the value is ``init`` before the
    ``s1``-th call, ``init * gamma`` from the ``s1``-th call up to the call
    before ``s2``, ``init * gamma ** 2`` from ``s2`` on, and so on: after the
    ``t``-th call it is ``init * gamma ** k`` where ``k`` is the number of
    milestones ``<= t``.

    Before training (:meth:`initialize`) the attribute is set to ``init``, or,
    after a resume, to the value for the restored call count. The default
    trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        gamma (float): the factor applied at each milestone.
        step_value (sequence of int): the milestones, in increasing order.
        init (float): the initial value. If None, the attribute's value when
            the training starts is used.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, ``gamma`` or ``init`` is not a real
            number, or ``step_value`` is not a sequence of ints.
        ValueError: ``step_value`` is not in increasing order.
    """

    def __init__(self, attr, gamma, step_value, init, optimizer=None):
        if not isinstance(attr, str):
            raise TypeError(f"MultistepShift: expected attr to be a str, got {attr!r}")
        if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real):
            raise TypeError(f"MultistepShift: expected gamma to be a real number, got {gamma!r}")
        if init is not None and (isinstance(init, bool) or not isinstance(init, numbers.Real)):
            raise TypeError(
                f"MultistepShift: expected init to be a real number or None, got {init!r}"
            )
        if not isinstance(step_value, (tuple, list)) or any(
            isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in step_value
        ):
            raise TypeError(
                f"MultistepShift: expected step_value to be a sequence of ints, got {step_value!r}"
            )
        if any(a > b for a, b in zip(step_value, step_value[1:])):
            raise ValueError(
                f"MultistepShift: expected step_value in increasing order, got {step_value!r}"
            )
        self._attr = attr
        self._gamma = gamma
        self._step_value = tuple(int(s) for s in step_value)
        self._init = init
        self._optimizer = optimizer
        self._current_step = 0
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
        """Advance the call count and set the attribute to ``init * gamma ** k``."""
        self._t += 1
        self._current_step = sum(1 for s in self._step_value if s <= self._t)
        value = self._init * self._gamma**self._current_step
        self._update_value(self._get_optimizer(trainer), value)

    def serialize(self, serializer):
        """Save or load ``_t``, ``_current_step`` (milestones passed) and ``_last_value``."""
        loading = isinstance(serializer, Deserializer)
        self._t = serializer("_t", self._t)
        self._current_step = serializer("_current_step", self._current_step)
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
