"""``chainer.optimizer``: ``dbr.training.optimizer``'s names, the same objects.

``WeightDecay``, ``Lasso``, ``GradientClipping``, ``GradientNoise`` and
``GradientHardClipping`` are Chainer's deprecated aliases of its optimizer
hooks: subclasses of dbr.training.optimizer_hooks' classes that emit a
DeprecationWarning when made, as Chainer's do.
"""

import warnings

import dbr.training.optimizer as _target
import dbr.training.optimizer_hooks as _optimizer_hooks
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)


def _deprecated_hook_alias(hook_class):
    name = hook_class.__name__

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"chainer.optimizer.{name} is deprecated since Chainer v4; "
            f"use chainer.optimizer_hooks.{name} instead",
            DeprecationWarning,
            stacklevel=2,
        )
        hook_class.__init__(self, *args, **kwargs)

    doc = f"Deprecated alias of :class:`dbr.training.optimizer_hooks.{name}` (warns when made)."
    return type(
        name, (hook_class,), {"__init__": __init__, "__doc__": doc, "__module__": __name__}
    )


WeightDecay = _deprecated_hook_alias(_optimizer_hooks.WeightDecay)
Lasso = _deprecated_hook_alias(_optimizer_hooks.Lasso)
GradientClipping = _deprecated_hook_alias(_optimizer_hooks.GradientClipping)
GradientNoise = _deprecated_hook_alias(_optimizer_hooks.GradientNoise)
GradientHardClipping = _deprecated_hook_alias(_optimizer_hooks.GradientHardClipping)
