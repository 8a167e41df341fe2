"""``chainer.training.updaters``: ``dbr.training.updaters``'s names, the same objects."""

import dbr.training.updaters as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
