"""Optimizer hooks: functions an optimizer runs on the gradients around each update.

A hook with ``call_for_each_param = True`` is called as ``hook(rule, param)``
for every parameter; the others as ``hook(optimizer)`` once per update. Its
``timing`` says whether it runs before (``'pre'``) or after (``'post'``) the
update rules.
"""

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.training.optimizer_hooks.gradient_clipping import GradientClipping
from dbr.training.optimizer_hooks.gradient_hard_clipping import GradientHardClipping
from dbr.training.optimizer_hooks.gradient_lars import GradientLARS
from dbr.training.optimizer_hooks.gradient_noise import GradientNoise, exponential_decay_noise
from dbr.training.optimizer_hooks.lasso import Lasso
from dbr.training.optimizer_hooks.weight_decay import WeightDecay

__all__ = [
    "GradientClipping",
    "GradientHardClipping",
    "GradientLARS",
    "GradientNoise",
    "Lasso",
    "WeightDecay",
    "exponential_decay_noise",
]


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
