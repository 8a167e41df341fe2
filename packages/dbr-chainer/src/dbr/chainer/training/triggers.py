"""``chainer.training.triggers``: ``dbr.training.triggers``'s names, the same objects."""

import dbr.training.triggers as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
