"""PolynomialShift: decay an optimizer attribute polynomially to zero over ``max_count`` calls."""

import math

from dbr.training.extensions._shift import _Shift, check_arguments, check_int, clamp


class PolynomialShift(_Shift):
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
        check_arguments("PolynomialShift", attr, {"rate": rate}, {"init": init, "target": target})
        check_int("PolynomialShift", "max_count", max_count, 1)
        super().__init__(attr, optimizer, init, target)
        self._rate = rate
        self._max_count = int(max_count)

    def _value(self, t):
        decay = max(1 - t / self._max_count, 0)
        if decay == 0 and self._rate < 0:
            value = math.copysign(math.inf, self._init) if self._init else 0.0
        else:
            value = self._init * decay**self._rate
        return clamp(value, self._target, grows=not self._rate > 0)
