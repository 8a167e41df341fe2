"""``chainer.function_hooks``: ``dbr.core.function_hooks``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.function_hooks.timer`` is
``dbr.core.function_hooks.timer`` (see :func:`dbr.chainer._forward.mirror_submodules`). Chainer's
``debug_print`` is dbr's ``print_hook``.
"""

import dbr.core.function_hooks as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    "dbr.core.function_hooks",
    renames={"debug_print": "dbr.core.function_hooks.print_hook"},
)
