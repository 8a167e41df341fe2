"""AdaDelta (Chainer's ``chainer.optimizers.AdaDelta``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.rho = 0.95
_default_hyperparam.eps = 1e-6

_ADA_DELTA_ELEMENTWISE = {
    "in_params": "T grad, T rho, T one_minus_rho, T eps",
    "out_params": "T param, T msg, T msdx",
    "operation": (
        "msg = rho * msg + one_minus_rho * grad * grad;"
        "T dx = sqrt((msdx + eps) / (msg + eps)) * grad;"
        "msdx = rho * msdx + one_minus_rho * dx * dx;"
        "param -= dx"
    ),
    "name": "dbr_ada_delta",
}


class AdaDeltaRule(optimizer.UpdateRule):
    """Update rule of Zeiler's AdaDelta.

    ``msg = rho * msg + (1 - rho) * grad**2;
    dx = sqrt((msdx + eps) / (msg + eps)) * grad;
    msdx = rho * msdx + (1 - rho) * dx**2; param -= dx``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: AdaDelta's).
        rho (float): decay rate of the moving averages (default None: the
            parent's).
        eps (float): small value for numerical stability (default None:
            the parent's).
    """

    def __init__(self, parent_hyperparam=None, rho=None, eps=None):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(rho=rho, eps=eps)

    def init_state(self, param):
        """Create the mean squares of gradients ``msg`` and of steps ``msdx`` (zeros)."""
        xp = param.xp
        self.state["msg"] = xp.zeros_like(param.array)
        self.state["msdx"] = xp.zeros_like(param.array)

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        rho, eps = hp.rho, hp.eps
        xp = param.xp
        state = self.state
        msg, msdx = state["msg"], state["msdx"]
        tmp = grad * (1 - rho)
        tmp *= grad
        msg *= rho
        msg += tmp
        dx = msdx + eps
        xp.add(msg, eps, out=tmp)
        dx /= tmp
        xp.sqrt(dx, out=dx)
        dx *= grad
        msdx *= rho
        xp.multiply(dx, 1 - rho, out=tmp)
        tmp *= dx
        msdx += tmp
        param.array -= dx

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        rho = hp.rho
        state = self.state
        optimizer.gpu_elementwise(_ADA_DELTA_ELEMENTWISE)(
            grad, rho, 1 - rho, hp.eps, param.array, state["msg"], state["msdx"]
        )


class AdaDelta(HyperparameterMethod):
    """Zeiler's AdaDelta.

    Args:
        rho (float): decay rate of the moving averages (default 0.95).
        eps (float): small value for numerical stability (default 1e-6).
    """

    def __init__(self, rho=_default_hyperparam.rho, eps=_default_hyperparam.eps):
        super().__init__(rho=rho, eps=eps)

    def create_update_rule(self):
        """Return an :class:`AdaDeltaRule` reading this optimizer's hyperparameters."""
        return AdaDeltaRule(self.hyperparam)
