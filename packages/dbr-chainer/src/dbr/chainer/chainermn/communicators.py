"""``chainermn.communicators``: ``dbr.distributed.communicators``'s names, the same objects."""

import dbr.distributed.communicators as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
