"""``chainer.training.extensions``: ``dbr.training.extensions``'s names, the same objects."""

import dbr.training.extensions as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
