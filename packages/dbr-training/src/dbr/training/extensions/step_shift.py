"""StepShift: multiply an optimizer attribute by a factor every ``step`` calls."""

from dbr.training.extensions._shift import _Shift, check_arguments, check_int, clamp


class StepShift(_Shift):
    """Trainer extension that shifts an optimizer attribute in steps.

    After its ``t``-th call the extension sets ``attr`` to
    ``init * gamma ** floor(t / step)``: the value is multiplied by ``gamma``
    once every ``step`` calls. When ``target`` is given, the value stops
    there: never above it for ``gamma > 1``, never below it (in magnitude)
    otherwise.

    Before training (:meth:`initialize`) the attribute is set to ``init``, or,
    after a resume, to the value for the restored call count. The default
    trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to shift, e.g. ``'lr'``.
        gamma (float): the factor applied once per step.
        step (int): the number of calls between two multiplications (>= 1).
        init (float): the initial value. If None, the attribute's value when
            the training starts is used.
        target (float): the value at which the shift stops. None: no limit.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, ``step`` is not an int, or a number
            argument is not a real number.
        ValueError: ``step`` is below 1.
    """

    def __init__(self, attr, gamma, step, init=None, target=None, optimizer=None):
        check_arguments("StepShift", attr, {"gamma": gamma}, {"init": init, "target": target})
        check_int("StepShift", "step", step, 1)
        super().__init__(attr, optimizer, init, target)
        self._gamma = gamma
        self._step = int(step)

    def _value(self, t):
        value = self._init * self._gamma ** (t // self._step)
        return clamp(value, self._target, grows=self._gamma > 1)
