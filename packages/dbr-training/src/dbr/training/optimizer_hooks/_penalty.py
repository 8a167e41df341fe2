"""The base of the hooks adding a penalty's gradient, ``rate * term(param)``, to each gradient."""

import numpy

from dbr.training.optimizer import gpu_elementwise, grad_loss_scale, grad_or_none
from dbr.training.optimizer_hooks._util import check_real


class PenaltyHook:
    """Optimizer/UpdateRule hook adding ``rate * term(param.array)`` to ``param.grad`` in place.

    A subclass gives its ``name``, the term on NumPy arrays (:meth:`_term`)
    and the GPU kernel adding it (``_elementwise``, called as
    ``kernel(param, rate, grad)``). A parameter without array or gradient is
    left alone. Called by the optimizer on a loss-scaled gradient (see
    ``dbr.training.optimizer.grad_loss_scale``), the hook scales the penalty
    alike.

    Args:
        rate (float): coefficient of the penalty.
    """

    name = None
    call_for_each_param = True
    timing = "pre"
    _elementwise = None

    def __init__(self, rate):
        self.rate = check_real(self.name, "rate", rate)

    def __call__(self, rule, param):
        """Add ``rate * term(param.array)`` to ``param.grad`` in place."""
        p, g = param.array, grad_or_none(param)
        if p is None or g is None:
            return
        rate = self.rate
        loss_scale = grad_loss_scale(rule, param)
        if loss_scale is not None:
            rate *= loss_scale
        if type(p) is numpy.ndarray:
            g += rate * self._term(p)
            return
        with param.device:
            gpu_elementwise(self._elementwise)(p, rate, g)

    @staticmethod
    def _term(p):
        """The penalty's gradient per unit rate, on a NumPy array."""
        raise NotImplementedError
