"""``chainer.variable``: ``dbr.core.variable``'s names, the same objects."""

import dbr.core.variable as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
