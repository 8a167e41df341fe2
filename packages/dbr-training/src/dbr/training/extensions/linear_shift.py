"""LinearShift: move an optimizer attribute linearly between two values over a time range."""

import numbers

from dbr.training.extensions._shift import _Shift, check_arguments


def _check_pair(name, value):
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value)
    ):
        raise TypeError(
            f"LinearShift: expected {name} to be a pair of real numbers, got {value!r}"
        )


class LinearShift(_Shift):
    """Trainer extension that changes an optimizer attribute linearly.

    With ``value_range = (v1, v2)`` and ``time_range = (t1, t2)``, the value
    after the ``t``-th call is ``v1`` while ``t <= t1``, ``v2`` once
    ``t >= t2``, and ``v1 + (v2 - v1) * (t - t1) / (t2 - t1)`` in between.

    Before training (:meth:`initialize`) the attribute is set to the value
    for ``t = 0``, or, after a resume, to the value for the restored call
    count. The default trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        value_range (tuple of float): ``(v1, v2)``, the first and last values.
        time_range (tuple of int): ``(t1, t2)``, the calls at which the value
            starts and stops changing; ``t1 <= t2``.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, or a range is not a pair of real numbers.
        ValueError: ``t1 > t2``.
    """

    def __init__(self, attr, value_range, time_range, optimizer=None):
        check_arguments("LinearShift", attr)
        _check_pair("value_range", value_range)
        _check_pair("time_range", time_range)
        if time_range[0] > time_range[1]:
            raise ValueError(
                f"LinearShift: expected time_range (t1, t2) with t1 <= t2, got {time_range!r}"
            )
        super().__init__(attr, optimizer)
        self._value_range = tuple(value_range)
        self._time_range = tuple(time_range)

    def _start_value(self, optimizer):
        return self._value(self._t)

    def _value(self, t):
        (t1, t2), (v1, v2) = self._time_range, self._value_range
        if t <= t1:
            return v1
        if t >= t2:
            return v2
        return v1 + (v2 - v1) * (t - t1) / (t2 - t1)
