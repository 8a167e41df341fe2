"""Stochastic gradient descent (Chainer's ``chainer.optimizers.SGD``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01

_SGD_ELEMENTWISE = {
    "in_params": "T grad, T lr",
    "out_params": "T param",
    "operation": "param -= lr * grad",
    "name": "dbr_sgd",
}


class SGDRule(FusedRule):
    """Update rule of vanilla SGD: ``param -= lr * grad``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: SGD's).
        lr (float): learning rate (default None: the parent's).
    """

    _defaults = _default_hyperparam
    _kernel_hyperparams = ("lr",)
    _elementwise = _SGD_ELEMENTWISE

    def __init__(self, parent_hyperparam=None, lr=None):
        super().__init__(parent_hyperparam, lr=lr)

    def _update_cpu(self, xp, grad, data):
        data -= grad * self.hyperparam.lr


class SGD(HyperparameterMethod):
    """Vanilla stochastic gradient descent.

    Args:
        lr (float): learning rate (default 0.01).
    """

    _rule_class = SGDRule

    def __init__(self, lr=_default_hyperparam.lr):
        super().__init__(lr=lr)
