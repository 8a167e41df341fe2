"""M-SVAG (Chainer's ``chainer.optimizers.MSVAG``)."""

import numpy

from dbr.core.serializers import Deserializer
from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule, update_moments

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


class MSVAGRule(FusedRule):
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

    _defaults = _default_hyperparam
    _initial_state = {"m": 0, "v": 0}
    _elementwise = _MSVAG_ELEMENTWISE
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(
        self, parent_hyperparam=None, lr=None, beta=None, eta=None, weight_decay_rate=None
    ):
        super().__init__(
            parent_hyperparam, lr=lr, beta=beta, eta=eta, weight_decay_rate=weight_decay_rate
        )
        self.beta_power = self.hyperparam.beta

    def serialize(self, serializer):
        """Save or load ``t`` and the state; on load ``beta_power`` is rebuilt from ``t``."""
        super().serialize(serializer)
        if isinstance(serializer, Deserializer) and not serializer.dry_run:
            beta = self.hyperparam.beta
            power = beta
            for _ in range(self.t):
                power *= beta
            self.beta_power = power

    def _update_cpu(self, xp, grad, data, m, v):
        hp = self.hyperparam
        beta, lr, eta = hp.beta, hp.lr, hp.eta
        bp = self.beta_power
        rho = self._rho(beta, bp)
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

    @staticmethod
    def _rho(beta, bp):
        rho = ((1.0 - beta) ** 2) * (1.0 - bp**2) / (((1.0 - bp) ** 2) * (1.0 - beta**2))
        return min(rho, 0.9999)

    def _kernel_scalars(self, grad, data):
        hp = self.hyperparam
        beta = hp.beta
        bp = self.beta_power
        rho = self._rho(beta, bp)
        return hp.lr, 1 - beta, 1 - bp, rho, 1 - rho, hp.eta, hp.weight_decay_rate

    def _advance(self):
        self.beta_power *= self.hyperparam.beta


class MSVAG(HyperparameterMethod):
    """M-SVAG optimizer, with decoupled weight decay.

    Args:
        lr (float): learning rate (default 0.1).
        beta (float): decay rate of the moments (default 0.9).
        eta (float): schedule multiplier (default 1.0).
        weight_decay_rate (float): decoupled weight decay (default 0).
    """

    _rule_class = MSVAGRule

    def __init__(
        self,
        lr=_default_hyperparam.lr,
        beta=_default_hyperparam.beta,
        eta=_default_hyperparam.eta,
        weight_decay_rate=_default_hyperparam.weight_decay_rate,
    ):
        super().__init__(lr=lr, beta=beta, eta=eta, weight_decay_rate=weight_decay_rate)
