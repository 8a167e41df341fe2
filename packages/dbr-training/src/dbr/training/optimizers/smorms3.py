"""SMORMS3 (Chainer's ``chainer.optimizers.SMORMS3``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.001
_default_hyperparam.eps = 1e-16

_SMORMS3_ELEMENTWISE = {
    "in_params": "T grad, T lr, T eps",
    "out_params": "T param, T mem, T g, T g2",
    "operation": (
        "T r = (T)1 / (mem + (T)1);"
        "T x = (T)1 - r;"
        "g = g * x + r * grad;"
        "g2 = g2 * x + r * grad * grad;"
        "x = g * g / (g2 + eps);"
        "param -= min(x, lr) * grad / (sqrt(g2) + eps);"
        "mem = (T)1 + mem * ((T)1 - x)"
    ),
    "name": "dbr_smorms3",
}


class SMORMS3Rule(FusedRule):
    """Update rule of Simon Funk's SMORMS3.

    ``r = 1 / (mem + 1); g = (1 - r) * g + r * grad;
    g2 = (1 - r) * g2 + r * grad**2; x = g**2 / (g2 + eps);
    param -= grad * min(lr, x) / (sqrt(g2) + eps); mem = 1 + mem * (1 - x)``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: SMORMS3's).
        lr (float): learning rate (default None: the parent's).
        eps (float): small value for numerical stability (default None).
    """

    _defaults = _default_hyperparam
    _initial_state = {"mem": 1, "g": 0, "g2": 0}
    _kernel_hyperparams = ("lr", "eps")
    _elementwise = _SMORMS3_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(self, parent_hyperparam=None, lr=None, eps=None):
        super().__init__(parent_hyperparam, lr=lr, eps=eps)

    def _update_cpu(self, xp, grad, data, mem, g, g2):
        hp = self.hyperparam
        lr, eps = hp.lr, hp.eps
        r = mem + 1
        xp.divide(1, r, out=r)
        x = xp.subtract(1, r)
        g *= x
        g2 *= x
        tmp = r * grad
        g += tmp
        tmp *= grad
        g2 += tmp
        xp.multiply(g, g, out=x)
        xp.add(g2, eps, out=tmp)
        x /= tmp
        xp.minimum(x, lr, out=tmp)
        tmp *= grad
        xp.sqrt(g2, out=r)
        r += eps
        tmp /= r
        data -= tmp
        xp.subtract(1, x, out=x)
        mem *= x
        mem += 1


class SMORMS3(HyperparameterMethod):
    """Simon Funk's SMORMS3.

    Args:
        lr (float): learning rate (default 0.001).
        eps (float): small value for numerical stability (default 1e-16).
    """

    _rule_class = SMORMS3Rule

    def __init__(self, lr=_default_hyperparam.lr, eps=_default_hyperparam.eps):
        super().__init__(lr=lr, eps=eps)
