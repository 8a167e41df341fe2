"""WeightDecay: L2 regularization applied to the gradients."""

from dbr.training.optimizer_hooks._penalty import PenaltyHook

_WEIGHT_DECAY_ELEMENTWISE = {
    "in_params": "T p, T rate",
    "out_params": "T g",
    "operation": "g += rate * p",
    "name": "dbr_weight_decay",
}


class WeightDecay(PenaltyHook):
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
    _elementwise = _WEIGHT_DECAY_ELEMENTWISE

    @staticmethod
    def _term(p):
        return p
