"""WarmupShift: ramp an optimizer attribute linearly up to its initial value."""

import numbers

from dbr.training.extension import Extension


def _check_real(name, value, optional=False):
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        expected = "a real number or None" if optional else "a real number"
        raise TypeError(f"WarmupShift: expected {name} to be {expected}, got {value!r}")


class WarmupShift(Extension):
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
        if not isinstance(attr, str):
            raise TypeError(f"WarmupShift: expected attr to be a str, got {attr!r}")
        _check_real("warmup_start", warmup_start, optional=True)
        _check_real("init", init, optional=True)
        if isinstance(warmup_iter, bool) or not isinstance(warmup_iter, numbers.Integral):
            raise TypeError(f"WarmupShift: expected warmup_iter to be an int, got {warmup_iter!r}")
        if warmup_iter < 0:
            raise ValueError(f"WarmupShift: expected warmup_iter >= 0, got {warmup_iter!r}")
        self._attr = attr
        self._warmup_start = warmup_start
        self._warmup_iter = int(warmup_iter)
        self._init = init
        self._optimizer = optimizer
        self._t = 0

    def initialize(self, trainer):
        """Set the attribute to the warm-up value for the current (or restored) call count."""
        optimizer = self._get_optimizer(trainer)
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        if self._warmup_start is None:
            self._warmup_start = getattr(optimizer, self._attr)
        if self._t <= self._warmup_iter:
            setattr(optimizer, self._attr, self._compute_value())

    def __call__(self, trainer):
        """Advance the call count and, during the warm-up, set the interpolated value."""
        self._t += 1
        if self._t <= self._warmup_iter:
            setattr(self._get_optimizer(trainer), self._attr, self._compute_value())

    def serialize(self, serializer):
        """Save or load the call count (``_t``)."""
        self._t = serializer("_t", self._t)

    def _compute_value(self):
        if self._t >= self._warmup_iter:
            return self._init
        t, n = self._t, self._warmup_iter
        return (t * self._init + (n - t) * self._warmup_start) / n

    def _get_optimizer(self, trainer):
        if self._optimizer is not None:
            return self._optimizer
        return trainer.updater.get_optimizer("main")
