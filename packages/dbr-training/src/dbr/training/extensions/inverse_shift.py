"""InverseShift: Caffe's "inv" policy, ``init * (1 + gamma * t) ** -power``."""

from dbr.training.extensions._shift import _Shift, check_arguments, clamp


class InverseShift(_Shift):
    """Trainer extension that shifts an optimizer attribute by an inverse power law.

    After its ``t``-th call the extension sets ``attr`` to
    ``init * (1 + gamma * t) ** (-power)``, the "inv" learning-rate policy of
    Caffe. When ``target`` is given, the value stops there: never below it
    (in magnitude) for ``power >= 0``, never above it for ``power < 0``.

    Before training (:meth:`initialize`) the attribute is set to ``init``, or,
    after a resume, to the value for the restored call count. The default
    trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        gamma (float): the time scale of the decay; must be >= 0.
        power (float): the exponent of the decay.
        init (float): the initial value. If None, the attribute's value when
            the training starts is used.
        target (float): the value at which the shift stops. None: no limit.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, or a number argument is not a real number.
        ValueError: ``gamma`` is negative.
    """

    def __init__(self, attr, gamma, power, init=None, target=None, optimizer=None):
        check_arguments(
            "InverseShift",
            attr,
            {"gamma": gamma, "power": power},
            {"init": init, "target": target},
        )
        if gamma < 0:
            raise ValueError(f"InverseShift: expected gamma >= 0, got {gamma!r}")
        super().__init__(attr, optimizer, init, target)
        self._gamma = gamma
        self._power = power

    def _value(self, t):
        value = self._init * (1 + self._gamma * t) ** (-self._power)
        return clamp(value, self._target, grows=self._power < 0)
