"""``chainer.training.trainer``: ``dbr.training.trainer``'s names, the same objects."""

import dbr.training.trainer as _target
from dbr.chainer._forward import forward
from dbr.training.trainer import Trainer

__getattr__, __dir__ = forward(globals(), _target)
__all__ = ["Trainer"]
