"""``chainer.initializers``: ``dbr.core.initializers``'s names, the same objects."""

import dbr.core.initializers as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
