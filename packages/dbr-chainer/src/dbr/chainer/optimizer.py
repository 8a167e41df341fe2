"""``chainer.optimizer``: ``dbr.training.optimizer``'s names, the same objects.

``WeightDecay``, ``Lasso``, ``GradientClipping``, ``GradientNoise`` and
``GradientHardClipping`` are dbr.training.optimizer_hooks', as Chainer's
aliases of its optimizer hooks are.
"""

import dbr.training.optimizer as _target
from dbr.chainer._forward import forward

_HOOK_ALIASES = (
    "GradientClipping", "GradientHardClipping", "GradientNoise", "Lasso", "WeightDecay",
)  # fmt: skip
__getattr__, __dir__ = forward(
    globals(), _target, dict.fromkeys(_HOOK_ALIASES, "dbr.training.optimizer_hooks")
)
