"""``chainer.initializers``: ``dbr.core.initializers``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.initializers.normal`` is
``dbr.core.initializers.normal`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.core.initializers as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.core.initializers")
