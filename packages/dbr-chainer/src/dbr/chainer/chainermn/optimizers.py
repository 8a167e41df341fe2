"""``chainermn.optimizers``: ``dbr.distributed.optimizers``'s names, the same objects."""

import dbr.distributed.optimizers as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
