"""M-SVAG (Chainer's ``chainer.optimizers.MSVAG``)."""

import numpy

from dbr.core.serializers import Deserializer
from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod, update_moments

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.1
_default_hyperparam.beta = 0.9
_default_hyperparam.eta = 1.0
_default_hyperparam.weight_decay_rate = 0

# A factor that is 0 / 0 counts as 0; one_minus_bp = 1 - beta**t and rho come from the host.
_MSVAG_ELEMENTWISE = {
    "in_params": (
        "T grad, T lr, T one_minus_beta, T one_minus_bp, T rho, T one_minus_rho, T eta, "
        "T weight_decay_rate"
    ),
    "out_params": "T param, T m, T v",
    "operation": (
        "m += one_minus_beta * (grad - m);"
        "v += one_minus_beta * (grad * grad - v);"
        "T mt = m / one_minus_bp;"
        "T mt2 = mt * mt;"
        "T s = (v / one_minus_bp - mt2) / one_minus_rho * rho + mt2;"
        "T factor = mt2 / s;"
        "factor = isnan(factor) ? (T)0 : min(max(factor, (T)0), (T)1);"
        "param -= (mt * lr * factor + param * weight_decay_rate) * eta"
    ),
    "name": "dbr_msvag",
}


class MSVAGRule(optimizer.UpdateRule):
    """Update rule of M-SVAG (Balles and Hennig, "Dissecting Adam"), with decoupled weight decay.

    With ``b = beta**t`` (kept as the running product ``beta_power``):
    ``rho = min((1 - beta)**2 (1 - b**2) / ((1 - b)**2 (1 - beta**2)), 0.9999);
    m += (1 - beta) * (grad - m); v += (1 - beta) * (grad**2 - v);
    mt = m / (1 - b); vt = v / (1 - b); s = (vt - mt**2) / (1 - rho);
    factor = clip(mt**2 / (mt**2 + rho * s), 0, 1)`` (0 where undefined);
    ``param -= eta * (lr * mt * factor + weight_decay_rate * param)``.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: MSVAG's).
        lr, beta, eta, weight_decay_rate: as for :class:`MSVAG` (default
            None: the parent's).
    """

    def __init__(
        self, parent_hyperparam=None, lr=None, beta=None, eta=None, weight_decay_rate=None
    ):
        super().__init__(parent_hyperparam or _default_hyperparam)
        self._set_hyperparams(lr=lr, beta=beta, eta=eta, weight_decay_rate=weight_decay_rate)
        self.beta_power = self.hyperparam.beta

    def init_state(self, param):
        """Create ``m`` and ``v`` (zeros like the parameter)."""
        xp = param.xp
        self.state["m"] = xp.zeros_like(param.array)
        self.state["v"] = xp.zeros_like(param.array)

    def serialize(self, serializer):
        """Save or load ``t`` and the state; on load ``beta_power`` is rebuilt from ``t``."""
        super().serialize(serializer)
        if isinstance(serializer, Deserializer) and not serializer.dry_run:
            beta = self.hyperparam.beta
            power = beta
            for _ in range(self.t):
                power *= beta
            self.beta_power = power

    @optimizer.cpu_update_handles_0dim
    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        beta, lr, eta = hp.beta, hp.lr, hp.eta
        bp = self.beta_power
        rho = self._rho(beta, bp)
        xp = param.xp
        data = param.array
        state = self.state
        m, v = state["m"], state["v"]
        tmp = update_moments(xp, grad, m, v, beta, beta)
        mt = m / (1 - bp)
        xp.divide(v, 1 - bp, out=tmp)
        mt2 = mt * mt
        tmp -= mt2
        tmp /= 1 - rho
        tmp *= rho
        tmp += mt2
        with numpy.errstate(divide="ignore", invalid="ignore"):
            xp.divide(mt2, tmp, out=mt2)
        xp.clip(mt2, 0, 1, out=mt2)
        mt2[xp.isnan(mt2)] = 0
        mt *= lr
        mt *= mt2
        xp.multiply(data, hp.weight_decay_rate, out=tmp)
        mt += tmp
        mt *= eta
        data -= mt
        self.beta_power = bp * beta

    @staticmethod
    def _rho(beta, bp):
        rho = ((1.0 - beta) ** 2) * (1.0 - bp**2) / (((1.0 - bp) ** 2) * (1.0 - beta**2))
        return min(rho, 0.9999)

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        hp = self.hyperparam
        beta = hp.beta
        bp = self.beta_power
        rho = self._rho(beta, bp)
        state = self.state
        optimizer.gpu_elementwise(_MSVAG_ELEMENTWISE)(
            grad,
            hp.lr,
            1 - beta,
            1 - bp,
            rho,
            1 - rho,
            hp.eta,
            hp.weight_decay_rate,
            param.array,
            state["m"],
            state["v"],
        )
        self.beta_power = bp * beta


class MSVAG(HyperparameterMethod):
    """M-SVAG optimizer, with decoupled weight decay.

    Args:
        lr (float): learning rate (default 0.1).
        beta (float): decay rate of the moments (default 0.9).
        eta (float): schedule multiplier (default 1.0).
        weight_decay_rate (float): decoupled weight decay (default 0).
    """

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        beta=_default_hyperparam.beta,
        eta=_default_hyperparam.eta,
        weight_decay_rate=_default_hyperparam.weight_decay_rate,
    ):
        super().__init__(lr=lr, beta=beta, eta=eta, weight_decay_rate=weight_decay_rate)

    def create_update_rule(self):
        """Return an :class:`MSVAGRule` reading this optimizer's hyperparameters."""
        return MSVAGRule(self.hyperparam)
