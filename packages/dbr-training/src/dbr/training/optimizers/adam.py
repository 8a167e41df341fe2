"""Adam and its variants AdamW, AMSGrad, AdaBound, AMSBound (Chainer's ``optimizers.adam``)."""

import math

import numpy

from dbr.core.utils import docstring_tail
from dbr.training import optimizer
from dbr.training.optimizers._method import HyperparameterMethod
from dbr.training.optimizers._rule import FusedRule, update_moments

_default_hyperparam = optimizer.Hyperparameter()
_default_hyperparam.alpha = 0.001
_default_hyperparam.beta1 = 0.9
_default_hyperparam.beta2 = 0.999
_default_hyperparam.eps = 1e-8
_default_hyperparam.eta = 1.0
_default_hyperparam.weight_decay_rate = 0
_default_hyperparam.amsgrad = False
_default_hyperparam.adabound = False
_default_hyperparam.final_lr = 0.1
_default_hyperparam.gamma = 1e-3

# C, the type the update is computed in, is float for float16 parameters (as on the
# CPU) and the parameter's type otherwise; host scalars come as doubles so that
# eps survives the cast to C.
_COMPUTE_TYPE_PREAMBLE = """
template <typename X> struct dbr_adam_compute { typedef X type; };
template <> struct dbr_adam_compute<float16> { typedef float type; };
"""


def _adam_definition(amsgrad, adabound, name):
    vhat = "vhat" if amsgrad else "v"
    lines = [
        "C g = (C)grad;",
        "m += (C)one_minus_beta1 * (g - (C)m);",
        "v += (C)one_minus_beta2 * (g * g - (C)v);",
        "vhat = max(vhat, v);" if amsgrad else "",
        f"C step = (C)alpha_t / (sqrt((C){vhat}) + (C)eps);",
        "step = min(max(step, (C)lower), (C)upper);" if adabound else "",
        "param = (C)param * (C)one_minus_eta_decay - (step * (C)m) * (C)eta",
    ]
    return {
        "in_params": (
            "T grad, float64 alpha_t, float64 one_minus_beta1, float64 one_minus_beta2, "
            "float64 eps, float64 eta, float64 one_minus_eta_decay"
            + (", float64 lower, float64 upper" if adabound else "")
        ),
        "out_params": "T param, T m, T v" + (", T vhat" if amsgrad else ""),
        "operation": "".join(lines),
        "name": name,
        "preamble": _COMPUTE_TYPE_PREAMBLE,
        "loop_prep": "typedef dbr_adam_compute<T>::type C",
    }


_ADAM_ELEMENTWISE = _adam_definition(False, False, "dbr_adam")
_AMSGRAD_ELEMENTWISE = _adam_definition(True, False, "dbr_amsgrad")
_ADABOUND_ELEMENTWISE = _adam_definition(False, True, "dbr_adabound")
_AMSBOUND_ELEMENTWISE = _adam_definition(True, True, "dbr_amsbound")
_ADAM_DEFINITIONS = {
    (False, False): _ADAM_ELEMENTWISE,
    (True, False): _AMSGRAD_ELEMENTWISE,
    (False, True): _ADABOUND_ELEMENTWISE,
    (True, True): _AMSBOUND_ELEMENTWISE,
}
_ADAM_STATE = {"m": 0, "v": 0}
_AMSGRAD_STATE = {"m": 0, "v": 0, "vhat": 0}


def _step_size(alpha, beta1, beta2, t):
    """Adam's bias-corrected step size ``alpha * sqrt(1 - beta2**t) / (1 - beta1**t)``."""
    return alpha * math.sqrt(1.0 - math.pow(beta2, t)) / (1.0 - math.pow(beta1, t))


def _learning_rate(who, hp, t):
    if t == 0:
        raise RuntimeError(
            f"{who}: the learning rate of Adam is undefined before the first update (t == 0)"
        )
    return _step_size(hp.alpha, hp.beta1, hp.beta2, t)


class AdamRule(FusedRule):
    """Update rule of Adam, with decoupled weight decay, AMSGrad and AdaBound options.

    With ``alpha_t = alpha * sqrt(1 - beta2**t) / (1 - beta1**t)``:
    ``m += (1 - beta1) * (grad - m); v += (1 - beta2) * (grad**2 - v);
    vhat = max(vhat, v) if amsgrad else v;
    step = alpha_t / (sqrt(vhat) + eps)``, clipped to AdaBound's bounds when
    ``adabound``; then ``param = (1 - eta * weight_decay_rate) * param - eta * step * m``
    (Chainer's ``param -= eta * (step * m + weight_decay_rate * param)``: the
    decoupled weight decay follows the schedule multiplier ``eta`` as the step
    does). float16 parameters are computed in float32 intermediates. An update
    raises ValueError when ``eps`` is nonzero but rounds to 0 in that dtype.

    Args:
        parent_hyperparam (~dbr.training.optimizer.Hyperparameter): the
            defaults (default: Adam's).
        alpha, beta1, beta2, eps, eta, weight_decay_rate, amsgrad, adabound, final_lr, gamma: as
            for :class:`Adam` (default None: the parent's).
    """

    _defaults = _default_hyperparam
    update_core_cpu = optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)

    def __init__(
        self,
        parent_hyperparam=None,
        alpha=None,
        beta1=None,
        beta2=None,
        eps=None,
        eta=None,
        weight_decay_rate=None,
        amsgrad=None,
        adabound=None,
        final_lr=None,
        gamma=None,
    ):
        super().__init__(
            parent_hyperparam,
            alpha=alpha,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            eta=eta,
            weight_decay_rate=weight_decay_rate,
            amsgrad=amsgrad,
            adabound=adabound,
            final_lr=final_lr,
            gamma=gamma,
        )
        # AdaBound's final_lr follows later changes of alpha (e.g. by a shift extension).
        self.initial_alpha = self.hyperparam.alpha

    @property
    def _initial_state(self):
        return _AMSGRAD_STATE if self.hyperparam.amsgrad else _ADAM_STATE

    @property
    def _elementwise(self):
        hp = self.hyperparam
        return _ADAM_DEFINITIONS[bool(hp.amsgrad), bool(hp.adabound)]

    @property
    def alpha_t(self):
        """The bias-corrected step size ``alpha * sqrt(1 - beta2**t) / (1 - beta1**t)``."""
        return _learning_rate(type(self).__name__, self.hyperparam, self.t)

    lr = alpha_t

    @property
    def bounds(self):
        """AdaBound's ``(lower, upper)`` step bounds at the current ``t``."""
        if self.t == 0:
            raise RuntimeError(
                f"{type(self).__name__}: AdaBound's bounds are undefined before the first update"
            )
        hp = self.hyperparam
        final_lr = hp.final_lr * hp.alpha / self.initial_alpha
        lower = final_lr * (1.0 - 1.0 / (hp.gamma * self.t + 1))
        upper = final_lr * (1.0 + 1.0 / (hp.gamma * self.t))
        return lower, upper

    def _update_cpu(self, xp, grad, data, m, v, vhat=None):
        hp = self.hyperparam
        beta1, beta2, eps = hp.beta1, hp.beta2, hp.eps
        if data.dtype == numpy.float16:
            grad = grad.astype(numpy.float32)
        optimizer.check_eps(self, eps, grad.dtype)
        alpha_t = _step_size(hp.alpha, beta1, beta2, self.t)
        tmp = update_moments(xp, grad, m, v, beta1, beta2)
        if hp.amsgrad:
            xp.maximum(vhat, v, out=vhat)
        else:
            vhat = v
        if vhat.dtype != tmp.dtype:
            vhat = vhat.astype(tmp.dtype)
        xp.sqrt(vhat, out=tmp)
        tmp += eps
        xp.divide(alpha_t, tmp, out=tmp)
        if hp.adabound:
            lower, upper = self.bounds
            xp.clip(tmp, lower, upper, out=tmp)
        tmp *= m
        tmp *= -hp.eta
        decay = hp.eta * hp.weight_decay_rate
        if decay != 0:
            data *= 1 - decay
        data += tmp

    def _kernel_scalars(self, grad, data):
        # The running maximum of AMSGrad and the clipping of AdaBound happen in the
        # kernel; the step size and the bounds are computed here, on the host.
        hp = self.hyperparam
        beta1, beta2, eps = hp.beta1, hp.beta2, hp.eps
        optimizer.check_eps(
            self, eps, numpy.float32 if data.dtype == numpy.float16 else grad.dtype
        )
        scalars = [
            _step_size(hp.alpha, beta1, beta2, self.t),
            1 - beta1,
            1 - beta2,
            eps,
            hp.eta,
            1 - hp.eta * hp.weight_decay_rate,
        ]
        if hp.adabound:
            scalars.extend(self.bounds)
        return scalars


class Adam(HyperparameterMethod):
    """Adam (Kingma and Ba), with the AdamW, AMSGrad and AdaBound/AMSBound variants as flags.

    Args:
        alpha (float): step size coefficient (default 0.001).
        beta1 (float): decay rate of the first moment (default 0.9).
        beta2 (float): decay rate of the second moment (default 0.999).
        eps (float): small value for numerical stability (default 1e-8).
        eta (float): schedule multiplier of the step (default 1.0).
        weight_decay_rate (float): decoupled weight decay, scaled by ``eta``
            (default 0).
        amsgrad (bool): use AMSGrad's running maximum of ``v`` (default False).
        adabound (bool): clip the step to AdaBound's bounds (default False).
        final_lr (float): AdaBound's final (SGD) learning rate (default 0.1).
        gamma (float): AdaBound's convergence speed of the bounds (default 1e-3).
    """

    _rule_class = AdamRule

    def __init__(
        self,
        alpha=_default_hyperparam.alpha,
        beta1=_default_hyperparam.beta1,
        beta2=_default_hyperparam.beta2,
        eps=_default_hyperparam.eps,
        eta=_default_hyperparam.eta,
        weight_decay_rate=_default_hyperparam.weight_decay_rate,
        amsgrad=_default_hyperparam.amsgrad,
        adabound=_default_hyperparam.adabound,
        final_lr=_default_hyperparam.final_lr,
        gamma=_default_hyperparam.gamma,
    ):
        super().__init__()
        hp = self.hyperparam
        hp.alpha = alpha
        hp.beta1 = beta1
        hp.beta2 = beta2
        hp.eps = eps
        hp.eta = eta
        hp.weight_decay_rate = weight_decay_rate
        hp.amsgrad = amsgrad
        hp.adabound = adabound
        hp.final_lr = final_lr
        hp.gamma = gamma

    @property
    def alpha_t(self):
        """The bias-corrected step size at the optimizer's ``t`` (RuntimeError while t == 0)."""
        return _learning_rate(type(self).__name__, self.hyperparam, self.t)

    lr = alpha_t


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (Loshchilov and Hutter).

    Args:
        alpha, beta1, beta2, eps, eta: as for :class:`Adam`.
        weight_decay_rate (float): decoupled weight decay (default 0).
    """

    def __init__(
        self,
        alpha=_default_hyperparam.alpha,
        beta1=_default_hyperparam.beta1,
        beta2=_default_hyperparam.beta2,
        eps=_default_hyperparam.eps,
        eta=_default_hyperparam.eta,
        weight_decay_rate=_default_hyperparam.weight_decay_rate,
    ):
        super().__init__(
            alpha=alpha,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            eta=eta,
            weight_decay_rate=weight_decay_rate,
        )


class AMSGrad(Adam):
    """AMSGrad: Adam with the running maximum of the second moment (Reddi et al.).

    Args:
        alpha, beta1, beta2, eps, eta: as for :class:`Adam`.
    """

    def __init__(
        self,
        alpha=_default_hyperparam.alpha,
        beta1=_default_hyperparam.beta1,
        beta2=_default_hyperparam.beta2,
        eps=_default_hyperparam.eps,
        eta=_default_hyperparam.eta,
    ):
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta, amsgrad=True)


class _BoundedAdam(Adam):
    """AdaBound's constructor, shared with AMSBound, which differs only in ``_amsgrad``."""

    _amsgrad = False

    def __init__(
        self,
        alpha=_default_hyperparam.alpha,
        beta1=_default_hyperparam.beta1,
        beta2=_default_hyperparam.beta2,
        final_lr=_default_hyperparam.final_lr,
        gamma=_default_hyperparam.gamma,
        eps=_default_hyperparam.eps,
        eta=_default_hyperparam.eta,
    ):
        super().__init__(
            alpha=alpha,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            eta=eta,
            amsgrad=self._amsgrad,
            adabound=True,
            final_lr=final_lr,
            gamma=gamma,
        )


# The arguments of AdaBound and AMSBound, after their one-line summaries.
_BOUNDED_DOC = """

    Args:
        alpha, beta1, beta2: as for :class:`Adam`.
        final_lr (float): the final (SGD) learning rate (default 0.1).
        gamma (float): convergence speed of the bounds (default 1e-3).
        eps, eta: as for :class:`Adam`.
"""


@docstring_tail(_BOUNDED_DOC)
class AdaBound(_BoundedAdam):
    """AdaBound: Adam with the step clipped to bounds converging to SGD (Luo et al.)."""


@docstring_tail(_BOUNDED_DOC)
class AMSBound(_BoundedAdam):
    """AMSBound: AdaBound with AMSGrad's running maximum (Luo et al.)."""

    _amsgrad = True
