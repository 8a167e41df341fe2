"""WeightDecay: L2 regularization applied to the gradients."""

import numpy

from dbr.training.optimizer import gpu_elementwise, grad_loss_scale, grad_or_none
from dbr.training.optimizer_hooks._util import check_real

_WEIGHT_DECAY_ELEMENTWISE = {
    "in_params": "T p, T rate",
    "out_params": "T g",
    "operation": "g += rate * p",
    "name": "dbr_weight_decay",
}


class WeightDecay:
    """Optimizer/UpdateRule hook adding ``rate * param`` to each parameter's gradient.

    This is the gradient of the L2 penalty ``rate / 2 * ||param||^2``. The
    gradient is updated in place (on a GPU by one fused kernel); a parameter
    without array or gradient is left alone. Called by the optimizer on a
    loss-scaled gradient (see ``dbr.training.optimizer.grad_loss_scale``),
    it adds the penalty scaled alike.

    Args:
        rate (float): coefficient of the weight decay.

    Attributes:
        rate (float): coefficient of the weight decay.
        timing (str): ``'pre'`` (the default: before the update rule) or
            ``'post'`` (after it).
        call_for_each_param (bool): True: the optimizer calls the hook as
            ``hook(rule, param)`` for each parameter.
        name (str): ``'WeightDecay'``, the default name under which the hook
            is registered.
    """

    name = "WeightDecay"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate):
        self.rate = check_real("WeightDecay", "rate", rate)

    def __call__(self, rule, param):
        """Add ``rate * param.array`` to ``param.grad`` in place."""
        p, g = param.array, grad_or_none(param)
        if p is None or g is None:
            return
        rate = self.rate
        loss_scale = grad_loss_scale(rule, param)
        if loss_scale is not None:
            rate *= loss_scale
        if type(p) is numpy.ndarray:
            g += rate * p
            return
        with param.device:
            gpu_elementwise(_WEIGHT_DECAY_ELEMENTWISE)(p, rate, g)
