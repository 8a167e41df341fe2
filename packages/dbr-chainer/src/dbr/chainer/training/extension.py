"""``chainer.training.extension``: ``dbr.training.extension``'s names, the same objects."""

import dbr.training.extension as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
