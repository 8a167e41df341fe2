"""Nesterov's accelerated gradient (Chainer's ``chainer.optimizers.NesterovAG``)."""

from dbr.training import optimizer
from dbr.training.optimizers.momentum_sgd import _VelocityRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.momentum = 0.9


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

    def update_core_cpu(self, param):
        """Apply the update in place (NumPy or CuPy arrays)."""
        grad = param.grad
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

    update_core_gpu = update_core_cpu


class NesterovAG(optimizer.GradientMethod):
    """Nesterov's accelerated gradient.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    def __init__(self, lr=_default_hyperparam.lr, momentum=_default_hyperparam.momentum):
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    lr = optimizer.HyperparameterProxy("lr")
    momentum = optimizer.HyperparameterProxy("momentum")

    def create_update_rule(self):
        """Return a :class:`NesterovAGRule` reading this optimizer's hyperparameters."""
        return NesterovAGRule(self.hyperparam)
