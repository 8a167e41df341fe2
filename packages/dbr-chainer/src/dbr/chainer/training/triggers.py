"""``chainer.training.triggers``: ``dbr.training.triggers``'s names, the same objects.

It is a package like Chainer's, whose submodules are dbr.training.triggers's
(see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.training.triggers as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.training.triggers")
