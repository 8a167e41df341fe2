"""``chainer.link_hooks``: ``dbr.core.link_hooks``'s names, the same objects."""

import dbr.core.link_hooks as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
