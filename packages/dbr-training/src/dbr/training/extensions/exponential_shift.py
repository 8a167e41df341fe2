"""ExponentialShift: multiply an optimizer attribute by a constant rate at every call."""

from dbr.training.extensions._shift import _Shift, check_arguments, clamp


class ExponentialShift(_Shift):
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
        check_arguments("ExponentialShift", attr, {"rate": rate}, {"init": init, "target": target})
        if rate < 0:
            raise ValueError(f"ExponentialShift: expected rate >= 0, got {rate!r}")
        super().__init__(attr, optimizer, init, target)
        self._rate = rate

    def _value(self, t):
        return clamp(self._init * self._rate**t, self._target, grows=self._rate > 1)
