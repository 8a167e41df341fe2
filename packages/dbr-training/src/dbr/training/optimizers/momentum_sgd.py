"""Momentum SGD (Chainer's ``chainer.optimizers.MomentumSGD``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.momentum = 0.9

_MOMENTUM_SGD_ELEMENTWISE = {
    "in_params": "T grad, T lr, T momentum",
    "out_params": "T param, T v",
    "operation": "v = momentum * v - lr * grad; param += v",
    "name": "dbr_momentum_sgd",
}


class _VelocityRule(optimizer.UpdateRule):
    """Base of the momentum rules: ``lr`` and ``momentum`` hyperparameters and a velocity ``v``."""

    _defaults = _default_hyperparam
    # The fused GPU update of a rule whose kernel takes (grad, lr, momentum, param, v).
    _elementwise = None

    def __init__(self, parent_hyperparam=None, lr=None, momentum=None):
        super().__init__(parent_hyperparam or self._defaults)
        self._set_hyperparams(lr=lr, momentum=momentum)

    def init_state(self, param):
        """Create the velocity ``v`` (zeros like the parameter)."""
        self.state["v"] = param.xp.zeros_like(param.array)

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        optimizer.gpu_elementwise(self._elementwise)(
            grad, hp.lr, hp.momentum, param.array, self.state["v"]
        )


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

    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        v = self.state["v"]
        v *= hp.momentum
        v -= grad * hp.lr
        param.array += v


class MomentumSGD(_VelocityMethod):
    """Momentum SGD.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    def create_update_rule(self):
        """Return a :class:`MomentumSGDRule` reading this optimizer's hyperparameters."""
        return MomentumSGDRule(self.hyperparam)
