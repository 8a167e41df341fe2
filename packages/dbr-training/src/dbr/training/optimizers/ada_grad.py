"""AdaGrad (Chainer's ``chainer.optimizers.AdaGrad``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.001
_default_hyperparam.eps = 1e-8

_ADA_GRAD_ELEMENTWISE = {
    "in_params": "T grad, T lr, T eps",
    "out_params": "T param, T h",
    "operation": "h += grad * grad; param -= lr * grad / (sqrt(h) + eps)",
    "name": "dbr_ada_grad",
}


class AdaGradRule(optimizer.UpdateRule):
    """Update rule of AdaGrad: ``h += grad**2; param -= lr * grad / (sqrt(h) + eps)``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: AdaGrad's).
        lr (float): learning rate (default None: the parent's).
        eps (float): small value for numerical stability (default None:
            the parent's).
    """

    def __init__(self, parent_hyperparam=None, lr=None, eps=None):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(lr=lr, eps=eps)

    def init_state(self, param):
        """Create the sum of squared gradients ``h`` (zeros like the parameter)."""
        self.state["h"] = param.xp.zeros_like(param.array)

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        xp = param.xp
        h = self.state["h"]
        denom = grad * grad
        h += denom
        xp.sqrt(h, out=denom)
        denom += hp.eps
        step = grad * hp.lr
        step /= denom
        param.array -= step

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        optimizer.gpu_elementwise(_ADA_GRAD_ELEMENTWISE)(
            grad, hp.lr, hp.eps, param.array, self.state["h"]
        )


class AdaGrad(HyperparameterMethod):
    """AdaGrad optimizer (Duchi et al., 2011).

    Args:
        lr (float): learning rate (default 0.001).
        eps (float): small value for numerical stability (default 1e-8).
    """

    def __init__(self, lr=_default_hyperparam.lr, eps=_default_hyperparam.eps):
        super().__init__(lr=lr, eps=eps)

    def create_update_rule(self):
        """Return an :class:`AdaGradRule` reading this optimizer's hyperparameters."""
        return AdaGradRule(self.hyperparam)
