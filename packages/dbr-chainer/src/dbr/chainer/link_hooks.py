"""``chainer.link_hooks``: ``dbr.core.link_hooks``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.link_hooks.timer`` is
``dbr.core.link_hooks.timer`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.core.link_hooks as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.core.link_hooks")
