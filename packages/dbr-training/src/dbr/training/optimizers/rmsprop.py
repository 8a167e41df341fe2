"""RMSprop (Chainer's ``chainer.optimizers.RMSprop``)."""

from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule, decay_mean_square

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


class RMSpropRule(FusedRule):
    """Update rule of RMSprop.

    ``ms = alpha * ms + (1 - alpha) * grad**2; param -= lr * grad / denom`` with
    ``denom = sqrt(ms) + eps``, or ``sqrt(ms + eps)`` when ``eps_inside_sqrt``. An
    update raises ValueError when ``eps`` is nonzero but rounds to 0 in the
    gradient's dtype.

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

    _defaults = _default_hyperparam
    _initial_state = {"ms": 0}
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(
        self, parent_hyperparam=None, lr=None, alpha=None, eps=None, eps_inside_sqrt=None
    ):
        super().__init__(
            parent_hyperparam, lr=lr, alpha=alpha, eps=eps, eps_inside_sqrt=eps_inside_sqrt
        )

    @property
    def _elementwise(self):
        if self.hyperparam.eps_inside_sqrt:
            return _RMSPROP_EPS_INSIDE_SQRT_ELEMENTWISE
        return _RMSPROP_ELEMENTWISE

    def _update_cpu(self, xp, grad, data, ms):
        hp = self.hyperparam
        eps = hp.eps
        optimizer.check_eps(self, eps, grad.dtype)
        denom = decay_mean_square(grad, ms, hp.alpha)
        if hp.eps_inside_sqrt:
            xp.add(ms, eps, out=denom)
            xp.sqrt(denom, out=denom)
        else:
            xp.sqrt(ms, out=denom)
            denom += eps
        step = grad * hp.lr
        step /= denom
        data -= step

    def _kernel_scalars(self, grad, data):
        hp = self.hyperparam
        optimizer.check_eps(self, hp.eps, grad.dtype)
        return hp.lr, hp.alpha, 1 - hp.alpha, hp.eps


class RMSprop(HyperparameterMethod):
    """RMSprop (Tieleman and Hinton, 2012).

    Args:
        lr (float): learning rate (default 0.01).
        alpha (float): decay rate of the mean square (default 0.99).
        eps (float): small value for numerical stability (default 1e-8).
        eps_inside_sqrt (bool): divide by ``sqrt(ms + eps)`` instead of
            ``sqrt(ms) + eps`` (default False).
    """

    _rule_class = RMSpropRule

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        alpha=_default_hyperparam.alpha,
        eps=_default_hyperparam.eps,
        eps_inside_sqrt=_default_hyperparam.eps_inside_sqrt,
    ):
        super().__init__(lr=lr, alpha=alpha, eps=eps, eps_inside_sqrt=eps_inside_sqrt)
