"""AdaDelta (Chainer's ``chainer.optimizers.AdaDelta``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule, decay_mean_square

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


class AdaDeltaRule(FusedRule):
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

    _defaults = _default_hyperparam
    _initial_state = {"msg": 0, "msdx": 0}
    _elementwise = _ADA_DELTA_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(self, parent_hyperparam=None, rho=None, eps=None):
        super().__init__(parent_hyperparam, rho=rho, eps=eps)

    def _update_cpu(self, xp, grad, data, msg, msdx):
        hp = self.hyperparam
        rho, eps = hp.rho, hp.eps
        tmp = decay_mean_square(grad, msg, rho)
        dx = msdx + eps
        xp.add(msg, eps, out=tmp)
        dx /= tmp
        xp.sqrt(dx, out=dx)
        dx *= grad
        msdx *= rho
        xp.multiply(dx, 1 - rho, out=tmp)
        tmp *= dx
        msdx += tmp
        data -= dx

    def _kernel_scalars(self, grad, data):
        hp = self.hyperparam
        return hp.rho, 1 - hp.rho, hp.eps


class AdaDelta(HyperparameterMethod):
    """Zeiler's AdaDelta.

    Args:
        rho (float): decay rate of the moving averages (default 0.95).
        eps (float): small value for numerical stability (default 1e-6).
    """

    _rule_class = AdaDeltaRule

    def __init__(self, rho=_default_hyperparam.rho, eps=_default_hyperparam.eps):
        super().__init__(rho=rho, eps=eps)
