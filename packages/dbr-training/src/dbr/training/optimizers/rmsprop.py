"""RMSprop (Chainer's ``chainer.optimizers.RMSprop``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.alpha = 0.99
_default_hyperparam.eps = 1e-8
_default_hyperparam.eps_inside_sqrt = False


def _rmsprop_definition(denominator, name):
    return {
        "in_params": "T grad, T lr, T alpha, T one_minus_alpha, T eps",
        "out_params": "T param, T ms",
        "operation": (
            f"ms = alpha * ms + one_minus_alpha * grad * grad;param -= lr * grad / ({denominator})"
        ),
        "name": name,
    }


_RMSPROP_ELEMENTWISE = _rmsprop_definition("sqrt(ms) + eps", "dbr_rmsprop")
_RMSPROP_EPS_INSIDE_SQRT_ELEMENTWISE = _rmsprop_definition(
    "sqrt(ms + eps)", "dbr_rmsprop_eps_inside_sqrt"
)


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

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays).

        Raises:
            ValueError: ``eps`` is nonzero but rounds to 0 in the gradient's dtype.
        """
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        eps = hp.eps
        optimizer.check_eps(self, eps, grad.dtype)
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

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays).

        Raises:
            ValueError: ``eps`` is nonzero but rounds to 0 in the gradient's dtype.
        """
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        eps, alpha = hp.eps, hp.alpha
        optimizer.check_eps(self, eps, grad.dtype)
        definition = (
            _RMSPROP_EPS_INSIDE_SQRT_ELEMENTWISE if hp.eps_inside_sqrt else _RMSPROP_ELEMENTWISE
        )
        optimizer.gpu_elementwise(definition)(
            grad, hp.lr, alpha, 1 - alpha, eps, param.array, self.state["ms"]
        )


class RMSprop(HyperparameterMethod):
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
        super().__init__(lr=lr, alpha=alpha, eps=eps, eps_inside_sqrt=eps_inside_sqrt)

    def create_update_rule(self):
        """Return an :class:`RMSpropRule` reading this optimizer's hyperparameters."""
        return RMSpropRule(self.hyperparam)
