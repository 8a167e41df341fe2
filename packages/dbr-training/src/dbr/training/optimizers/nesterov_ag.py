"""Nesterov's accelerated gradient (Chainer's ``chainer.optimizers.NesterovAG``)."""

from dbr.training import optimizer
from dbr.training.optimizers.momentum_sgd import _VelocityMethod, _VelocityRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.momentum = 0.9

# momentum_sq = momentum**2 and grad_rate = (1 + momentum) * lr come from the host.
_NESTEROV_AG_ELEMENTWISE = {
    "in_params": "T grad, T lr, T momentum, T momentum_sq, T grad_rate",
    "out_params": "T param, T v",
    "operation": "v = momentum * v - lr * grad; param += momentum_sq * v - grad_rate * grad",
    "name": "dbr_nesterov_ag",
}


class NesterovAGRule(_VelocityRule):
    """Update rule of Nesterov's accelerated gradient.

    ``v = momentum * v - lr * grad;
    param += momentum**2 * v - (1 + momentum) * lr * grad``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: NesterovAG's).
        lr (float): learning rate (default None: the parent's).
        momentum (float): momentum coefficient (default None: the parent's).
    """

    _defaults = _default_hyperparam
    _elementwise = _NESTEROV_AG_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(_VelocityRule.update_core_cpu)

    def _update_cpu(self, xp, grad, data, v):
        hp = self.hyperparam
        lr, momentum = hp.lr, hp.momentum
        tmp = grad * lr
        v *= momentum
        v -= tmp
        xp.multiply(v, momentum * momentum, out=tmp)
        data += tmp
        xp.multiply(grad, (1 + momentum) * lr, out=tmp)
        data -= tmp

    def _kernel_scalars(self, grad, data):
        hp = self.hyperparam
        lr, momentum = hp.lr, hp.momentum
        return lr, momentum, momentum * momentum, (1 + momentum) * lr


class NesterovAG(_VelocityMethod):
    """Nesterov's accelerated gradient.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    _rule_class = NesterovAGRule
