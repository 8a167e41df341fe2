"""``chainer.optimizers``: ``dbr.training.optimizers``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.optimizers.adam`` is
``dbr.training.optimizers.adam`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.training.optimizers as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.training.optimizers")
