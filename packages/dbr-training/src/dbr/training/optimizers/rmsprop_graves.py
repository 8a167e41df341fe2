"""Graves's RMSprop (Chainer's ``chainer.optimizers.RMSpropGraves``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

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


class RMSpropGravesRule(optimizer.UpdateRule):
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

    def __init__(self, parent_hyperparam=None, lr=None, alpha=None, momentum=None, eps=None):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(lr=lr, alpha=alpha, momentum=momentum, eps=eps)

    def init_state(self, param):
        """Create ``n``, ``g`` and ``delta`` (zeros like the parameter)."""
        xp = param.xp
        self.state["n"] = xp.zeros_like(param.array)
        self.state["g"] = xp.zeros_like(param.array)
        self.state["delta"] = xp.zeros_like(param.array)

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        alpha = hp.alpha
        xp = param.xp
        state = self.state
        n, g, delta = state["n"], state["g"], state["delta"]
        tmp = grad * (1 - alpha)
        tmp *= grad
        n *= alpha
        n += tmp
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
        param.array += delta

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        alpha = hp.alpha
        state = self.state
        optimizer.gpu_elementwise(_RMSPROP_GRAVES_ELEMENTWISE)(
            grad,
            hp.lr,
            alpha,
            1 - alpha,
            hp.momentum,
            hp.eps,
            param.array,
            state["n"],
            state["g"],
            state["delta"],
        )


class RMSpropGraves(HyperparameterMethod):
    """Alex Graves's RMSprop (arXiv:1308.0850).

    Args:
        lr (float): learning rate (default 1e-4).
        alpha (float): decay rate of the gradient moments (default 0.95).
        momentum (float): decay rate of the step (default 0.9).
        eps (float): small value for numerical stability (default 1e-4).
    """

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        alpha=_default_hyperparam.alpha,
        momentum=_default_hyperparam.momentum,
        eps=_default_hyperparam.eps,
    ):
        super().__init__(lr=lr, alpha=alpha, momentum=momentum, eps=eps)

    def create_update_rule(self):
        """Return an :class:`RMSpropGravesRule` reading this optimizer's hyperparameters."""
        return RMSpropGravesRule(self.hyperparam)
