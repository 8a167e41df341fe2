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

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        lr, momentum = hp.lr, hp.momentum
        data = param.array
        v = self.state["v"]
        xp = param.xp
        tmp = grad * lr
        v *= momentum
        v -= tmp
        xp.multiply(v, momentum * momentum, out=tmp)
        data += tmp
        xp.multiply(grad, (1 + momentum) * lr, out=tmp)
        data -= tmp

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        lr, momentum = hp.lr, hp.momentum
        optimizer.gpu_elementwise(_NESTEROV_AG_ELEMENTWISE)(
            grad,
            lr,
            momentum,
            momentum * momentum,
            (1 + momentum) * lr,
            param.array,
            self.state["v"],
        )


class NesterovAG(_VelocityMethod):
    """Nesterov's accelerated gradient.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    def create_update_rule(self):
        """Return a :class:`NesterovAGRule` reading this optimizer's hyperparameters."""
        return NesterovAGRule(self.hyperparam)
