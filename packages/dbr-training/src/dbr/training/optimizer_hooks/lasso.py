"""Lasso: L1 regularization applied to the gradients."""

import numpy

from dbr.training.optimizer_hooks._penalty import PenaltyHook

# sign(p) as NumPy's: 0 for zeros, NaN for NaN.
_LASSO_ELEMENTWISE = {
    "in_params": "T p, T rate",
    "out_params": "T g",
    "operation": "g += rate * (p > (T)0 ? (T)1 : (p < (T)0 ? (T)-1 : p))",
    "name": "dbr_lasso",
}


class Lasso(PenaltyHook):
    """Optimizer/UpdateRule hook adding ``rate * sign(param)`` to each parameter's gradient.

    This is the (sub)gradient of the L1 penalty ``rate * ||param||_1``. The
    gradient is updated in place (on a GPU by one fused kernel); a parameter
    without array or gradient is left alone. Called by the optimizer on a
    loss-scaled gradient (see ``dbr.training.optimizer.grad_loss_scale``),
    it adds the penalty scaled alike (Chainer's Lasso did not).

    Args:
        rate (float): coefficient of the L1 penalty.

    Attributes:
        rate (float): coefficient of the L1 penalty.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): True: called as ``hook(rule, param)``.
        name (str): ``'Lasso'``.
    """

    name = "Lasso"
    _elementwise = _LASSO_ELEMENTWISE

    @staticmethod
    def _term(p):
        return numpy.sign(p)
