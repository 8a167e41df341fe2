"""MultistepShift: multiply an optimizer attribute by a factor at chosen calls."""

import numbers

from dbr.training.extensions._shift import _Shift, check_arguments


class MultistepShift(_Shift):
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
        check_arguments("MultistepShift", attr, {"gamma": gamma}, {"init": init})
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
        super().__init__(attr, optimizer, init)
        self._gamma = gamma
        self._step_value = tuple(int(s) for s in step_value)
        self._current_step = 0

    def serialize(self, serializer):
        """Save or load ``_t``, ``_current_step`` (milestones passed) and ``_last_value``."""
        super().serialize(serializer)
        self._current_step = serializer("_current_step", self._current_step)

    def _value(self, t):
        # _current_step is state Chainer saves, so it is kept up to date with the calls.
        self._current_step = sum(1 for s in self._step_value if s <= t)
        return self._init * self._gamma**self._current_step
