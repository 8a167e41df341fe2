"""``chainermn.datasets``: ``dbr.distributed.datasets``'s names, the same objects."""

import dbr.distributed.datasets as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
