"""``chainer.optimizer_hooks``: ``dbr.training.optimizer_hooks``'s names, the same objects."""

import dbr.training.optimizer_hooks as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
