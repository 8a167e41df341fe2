"""WarmupShift: ramp an optimizer attribute linearly up to its initial value."""

from dbr.training.extensions._shift import _Shift, check_arguments, check_int


class WarmupShift(_Shift):
    """Trainer extension that warms an optimizer attribute up at the start of training.

    The attribute moves evenly from ``warmup_start`` to ``init`` over the
    first ``warmup_iter`` calls: after the ``t``-th call (``t <= warmup_iter``)
    it is ``(t * init + (warmup_iter - t) * warmup_start) / warmup_iter``.
    After the warm-up the extension leaves the attribute alone, so that
    another schedule can take over.

    Before training (:meth:`initialize`) the attribute is set to
    ``warmup_start``, or, after a resume within the warm-up, to the value for
    the restored call count. The default trigger is ``(1, 'iteration')``.

    Args:
        attr (str): name of the optimizer attribute to adjust, e.g. ``'lr'``.
        warmup_start (float): the value at the start of training. If None,
            the attribute's value when the training starts.
        warmup_iter (int): the number of calls the warm-up lasts (>= 0).
        init (float): the value reached at the end of the warm-up. If None
            (not allowed by Chainer, which requires it), the attribute's value
            when the training starts.
        optimizer: the optimizer to adjust. If None, the updater's ``'main'``
            optimizer.

    Raises:
        TypeError: ``attr`` is not a str, ``warmup_iter`` is not an int, or a
            value is not a real number.
        ValueError: ``warmup_iter`` is negative.
    """

    def __init__(self, attr, warmup_start, warmup_iter, init=None, optimizer=None):
        check_arguments(
            "WarmupShift", attr, optional_reals={"warmup_start": warmup_start, "init": init}
        )
        check_int("WarmupShift", "warmup_iter", warmup_iter, 0)
        super().__init__(attr, optimizer, init)
        self._warmup_start = warmup_start
        self._warmup_iter = int(warmup_iter)

    # Unlike the other shifts, the warm-up keeps and saves no last value: once it is over,
    # the attribute belongs to whatever else adjusts it, even across a resume.

    def initialize(self, trainer):
        """Set the attribute to the warm-up value for the current (or restored) call count."""
        optimizer = self._get_optimizer(trainer)
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        if self._warmup_start is None:
            self._warmup_start = getattr(optimizer, self._attr)
        if self._t <= self._warmup_iter:
            setattr(optimizer, self._attr, self._value(self._t))

    def __call__(self, trainer):
        """Advance the call count and, during the warm-up, set the interpolated value."""
        self._t += 1
        if self._t <= self._warmup_iter:
            setattr(self._get_optimizer(trainer), self._attr, self._value(self._t))

    def serialize(self, serializer):
        """Save or load the call count (``_t``)."""
        self._t = serializer("_t", self._t)

    def _value(self, t):
        if t >= self._warmup_iter:
            return self._init
        n = self._warmup_iter
        return (t * self._init + (n - t) * self._warmup_start) / n
