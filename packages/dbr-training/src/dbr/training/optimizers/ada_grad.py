"""AdaGrad (Chainer's ``chainer.optimizers.AdaGrad``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.001
_default_hyperparam.eps = 1e-8

_ADA_GRAD_ELEMENTWISE = {
    "in_params": "T grad, T lr, T eps",
    "out_params": "T param, T h",
    "operation": "h += grad * grad; param -= lr * grad / (sqrt(h) + eps)",
    "name": "dbr_ada_grad",
}


class AdaGradRule(FusedRule):
    """Update rule of AdaGrad: ``h += grad**2; param -= lr * grad / (sqrt(h) + eps)``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: AdaGrad's).
        lr (float): learning rate (default None: the parent's).
        eps (float): small value for numerical stability (default None:
            the parent's).
    """

    _defaults = _default_hyperparam
    _initial_state = {"h": 0}
    _kernel_hyperparams = ("lr", "eps")
    _elementwise = _ADA_GRAD_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(self, parent_hyperparam=None, lr=None, eps=None):
        super().__init__(parent_hyperparam, lr=lr, eps=eps)

    def _update_cpu(self, xp, grad, data, h):
        hp = self.hyperparam
        denom = grad * grad
        h += denom
        xp.sqrt(h, out=denom)
        denom += hp.eps
        step = grad * hp.lr
        step /= denom
        data -= step


class AdaGrad(HyperparameterMethod):
    """AdaGrad optimizer (Duchi et al., 2011).

    Args:
        lr (float): learning rate (default 0.001).
        eps (float): small value for numerical stability (default 1e-8).
    """

    _rule_class = AdaGradRule

    def __init__(self, lr=_default_hyperparam.lr, eps=_default_hyperparam.eps):
        super().__init__(lr=lr, eps=eps)
