"""Graves's RMSprop (Chainer's ``chainer.optimizers.RMSpropGraves``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule, decay_mean_square

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 1e-4
_default_hyperparam.alpha = 0.95
_default_hyperparam.momentum = 0.9
_default_hyperparam.eps = 1e-4

_RMSPROP_GRAVES_ELEMENTWISE = {
    "in_params": "T grad, T lr, T alpha, T one_minus_alpha, T momentum, T eps",
    "out_params": "T param, T n, T g, T delta",
    "operation": (
        "n = alpha * n + one_minus_alpha * grad * grad;"
        "g = alpha * g + one_minus_alpha * grad;"
        "delta = momentum * delta - lr * grad / sqrt(n - g * g + eps);"
        "param += delta"
    ),
    "name": "dbr_rmsprop_graves",
}


class RMSpropGravesRule(FusedRule):
    """Update rule of Alex Graves's RMSprop.

    ``n = alpha * n + (1 - alpha) * grad**2; g = alpha * g + (1 - alpha) * grad;
    delta = momentum * delta - lr * grad / sqrt(n - g**2 + eps); param += delta``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: RMSpropGraves's).
        lr (float): learning rate (default None: the parent's).
        alpha (float): decay rate of the gradient moments (default None).
        momentum (float): decay rate of the step (default None).
        eps (float): small value for numerical stability (default None).
    """

    _defaults = _default_hyperparam
    _initial_state = {"n": 0, "g": 0, "delta": 0}
    _elementwise = _RMSPROP_GRAVES_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(self, parent_hyperparam=None, lr=None, alpha=None, momentum=None, eps=None):
        super().__init__(parent_hyperparam, lr=lr, alpha=alpha, momentum=momentum, eps=eps)

    def _update_cpu(self, xp, grad, data, n, g, delta):
        hp = self.hyperparam
        alpha = hp.alpha
        tmp = decay_mean_square(grad, n, alpha)
        xp.multiply(grad, 1 - alpha, out=tmp)
        g *= alpha
        g += tmp
        xp.multiply(g, g, out=tmp)
        xp.subtract(n, tmp, out=tmp)
        tmp += hp.eps
        xp.sqrt(tmp, out=tmp)
        step = grad * hp.lr
        step /= tmp
        delta *= hp.momentum
        delta -= step
        data += delta

    def _kernel_scalars(self, grad, data):
        hp = self.hyperparam
        return hp.lr, hp.alpha, 1 - hp.alpha, hp.momentum, hp.eps


class RMSpropGraves(HyperparameterMethod):
    """Alex Graves's RMSprop (arXiv:1308.0850).

    Args:
        lr (float): learning rate (default 1e-4).
        alpha (float): decay rate of the gradient moments (default 0.95).
        momentum (float): decay rate of the step (default 0.9).
        eps (float): small value for numerical stability (default 1e-4).
    """

    _rule_class = RMSpropGravesRule

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        alpha=_default_hyperparam.alpha,
        momentum=_default_hyperparam.momentum,
        eps=_default_hyperparam.eps,
    ):
        super().__init__(lr=lr, alpha=alpha, momentum=momentum, eps=eps)
