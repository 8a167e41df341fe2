"""``chainer.function``: ``dbr.core.function``'s names, the same objects."""

import dbr.core.function as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
