"""``chainer.optimizer``: ``dbr.training.optimizer``'s names, the same objects."""

import dbr.training.optimizer as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
