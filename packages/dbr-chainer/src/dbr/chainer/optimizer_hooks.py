"""``chainer.optimizer_hooks``: ``dbr.training.optimizer_hooks``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.optimizer_hooks.lasso`` is
``dbr.training.optimizer_hooks.lasso`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.training.optimizer_hooks as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.training.optimizer_hooks")
