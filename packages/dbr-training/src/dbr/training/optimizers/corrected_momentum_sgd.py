"""Momentum SGD with momentum correction (Chainer's ``optimizers.CorrectedMomentumSGD``)."""

from dbr.training import optimizer
from dbr.training.optimizers.momentum_sgd import _VelocityMethod, _VelocityRule

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.lr = 0.01
_default_hyperparam.momentum = 0.9

_CORRECTED_MOMENTUM_SGD_ELEMENTWISE = {
    "in_params": "T grad, T lr, T momentum",
    "out_params": "T param, T v",
    "operation": "v = momentum * v - grad; param += v * lr",
    "name": "dbr_corrected_momentum_sgd",
}


class CorrectedMomentumSGDRule(_VelocityRule):
    """Update rule of corrected momentum SGD: ``v = momentum * v - grad; param += lr * v``.

    The learning rate scales the accumulated velocity rather than each
    gradient, so that changing ``lr`` does not distort the momentum (eq. 9 of
    Goyal et al., "Accurate, Large Minibatch SGD").

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: CorrectedMomentumSGD's).
        lr (float): learning rate (default None: the parent's).
        momentum (float): momentum coefficient (default None: the parent's).
    """

    _defaults = _default_hyperparam
    _elementwise = _CORRECTED_MOMENTUM_SGD_ELEMENTWISE

    def _update_cpu(self, xp, grad, data, v):
        hp = self.hyperparam
        v *= hp.momentum
        v -= grad
        data += v * hp.lr


class CorrectedMomentumSGD(_VelocityMethod):
    """Momentum SGD with momentum correction.

    Args:
        lr (float): learning rate (default 0.01).
        momentum (float): momentum coefficient (default 0.9).
    """

    _rule_class = CorrectedMomentumSGDRule
