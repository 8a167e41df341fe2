"""RMSprop (Chainer's ``chainer.optimizers.RMSprop``)."""

from dbr.training import optimizer

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.alpha = 0.99
_default_hyperparam.eps = 1e-8
_default_hyperparam.eps_inside_sqrt = False


class RMSpropRule(optimizer.UpdateRule):
    """Update rule of RMSprop.

    ``ms = alpha * ms + (1 - alpha) * grad**2; param -= lr * grad / denom`` with
    ``denom = sqrt(ms) + eps``, or ``sqrt(ms + eps)`` when ``eps_inside_sqrt``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: RMSprop's).
        lr (float): learning rate (default None: the parent's).
        alpha (float): decay rate of the mean square (default None: the
            parent's).
        eps (float): small value for numerical stability (default None).
        eps_inside_sqrt (bool): add ``eps`` inside the square root (default
            None: the parent's).
    """

    def __init__(
        self, parent_hyperparam=None, lr=None, alpha=None, eps=None, eps_inside_sqrt=None
    ):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(lr=lr, alpha=alpha, eps=eps, eps_inside_sqrt=eps_inside_sqrt)

    def init_state(self, param):
        """Create the mean square of gradients ``ms`` (zeros like the parameter)."""
        self.state["ms"] = param.xp.zeros_like(param.array)

    def update_core_cpu(self, param):
        """Apply the update in place (NumPy or CuPy arrays).

        Raises:
            ValueError: ``eps`` is nonzero but rounds to 0 in the gradient's dtype.
        """
        grad = param.grad
        if grad is None:
            return
        hp = self.hyperparam
        eps = hp.eps
        if eps != 0 and grad.dtype.type(eps) == 0:
            raise ValueError(
                f"{type(self).__name__}: eps={eps!r} is too small for {grad.dtype.name}"
            )
        alpha = hp.alpha
        xp = param.xp
        ms = self.state["ms"]
        denom = grad * (1 - alpha)
        denom *= grad
        ms *= alpha
        ms += denom
        if hp.eps_inside_sqrt:
            xp.add(ms, eps, out=denom)
            xp.sqrt(denom, out=denom)
        else:
            xp.sqrt(ms, out=denom)
            denom += eps
        step = grad * hp.lr
        step /= denom
        param.array -= step

    update_core_gpu = update_core_cpu


class RMSprop(optimizer.GradientMethod):
    """RMSprop (Tieleman and Hinton, 2012).

    Args:
        lr (float): learning rate (default 0.01).
        alpha (float): decay rate of the mean square (default 0.99).
        eps (float): small value for numerical stability (default 1e-8).
        eps_inside_sqrt (bool): divide by ``sqrt(ms + eps)`` instead of
            ``sqrt(ms) + eps`` (default False).
    """

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        alpha=_default_hyperparam.alpha,
        eps=_default_hyperparam.eps,
        eps_inside_sqrt=_default_hyperparam.eps_inside_sqrt,
    ):
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.alpha = alpha
        self.hyperparam.eps = eps
        self.hyperparam.eps_inside_sqrt = eps_inside_sqrt

    lr = optimizer.HyperparameterProxy("lr")
    alpha = optimizer.HyperparameterProxy("alpha")
    eps = optimizer.HyperparameterProxy("eps")
    eps_inside_sqrt = optimizer.HyperparameterProxy("eps_inside_sqrt")

    def create_update_rule(self):
        """Return an :class:`RMSpropRule` reading this optimizer's hyperparameters."""
        return RMSpropRule(self.hyperparam)
