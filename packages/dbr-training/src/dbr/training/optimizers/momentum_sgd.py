"""Momentum SGD (Chainer's ``chainer.optimizers.MomentumSGD``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.momentum = 0.9

_MOMENTUM_SGD_ELEMENTWISE = {
    "in_params": "T grad, T lr, T momentum",
    "out_params": "T param, T v",
    "operation": "v = momentum * v - lr * grad; param += v",
    "name": "dbr_momentum_sgd",
}


class _VelocityRule(FusedRule):
    """Base of the momentum rules: ``lr`` and ``momentum`` hyperparameters and a velocity ``v``."""

    _defaults = _default_hyperparam
    _initial_state = {"v": 0}
    _kernel_hyperparams = ("lr", "momentum")

    def __init__(self, parent_hyperparam=None, lr=None, momentum=None):
        super().__init__(parent_hyperparam, lr=lr, momentum=momentum)


class _VelocityMethod(HyperparameterMethod):
    """The constructor of the momentum optimizers: ``lr`` and ``momentum``."""

    def __init__(self, lr=_default_hyperparam.lr, momentum=_default_hyperparam.momentum):
        super().__init__(lr=lr, momentum=momentum)


class MomentumSGDRule(_VelocityRule):
    """Update rule of momentum SGD: ``v = momentum * v - lr * grad; param += v``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: MomentumSGD's).
        lr (float): learning rate (default None: the parent's).
        momentum (float): momentum coefficient (default None: the parent's).
    """

    _elementwise = _MOMENTUM_SGD_ELEMENTWISE

    def _update_cpu(self, xp, grad, data, v):
        hp = self.hyperparam
        v *= hp.momentum
        v -= grad * hp.lr
        data += v


class MomentumSGD(_VelocityMethod):
    """Momentum SGD.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    _rule_class = MomentumSGDRule
