"""``chainer.function``: ``dbr.core.function``'s names, the same objects.

``FunctionHook``, ``no_backprop_mode`` and ``force_backprop_mode`` are dbr.core's too, as
Chainer's module re-exports them.
"""

import dbr.core.function as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(
    globals(),
    _target,
    {
        "FunctionHook": "dbr.core.function_hook",
        "force_backprop_mode": "dbr.core.configuration",
        "no_backprop_mode": "dbr.core.configuration",
    },
)
