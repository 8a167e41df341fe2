"""Stochastic gradient descent (Chainer's ``chainer.optimizers.SGD``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01

_SGD_ELEMENTWISE = {
    "in_params": "T grad, T lr",
    "out_params": "T param",
    "operation": "param -= lr * grad",
    "name": "dbr_sgd",
}


class SGDRule(optimizer.UpdateRule):
    """Update rule of vanilla SGD: ``param -= lr * grad``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: SGD's).
        lr (float): learning rate (default None: the parent's).
    """

    def __init__(self, parent_hyperparam=None, lr=None):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(lr=lr)

    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        param.array -= grad * self.hyperparam.lr

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        optimizer.gpu_elementwise(_SGD_ELEMENTWISE)(grad, self.hyperparam.lr, param.array)


class SGD(HyperparameterMethod):
    """Vanilla stochastic gradient descent.

    Args:
        lr (float): learning rate (default 0.01).
    """

    def __init__(self, lr=_default_hyperparam.lr):
        super().__init__(lr=lr)

    def create_update_rule(self):
        """Return an :class:`SGDRule` reading this optimizer's hyperparameters."""
        return SGDRule(self.hyperparam)
