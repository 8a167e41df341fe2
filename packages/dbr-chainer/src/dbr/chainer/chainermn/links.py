"""``chainermn.links``: ``dbr.distributed.links``'s names, the same objects."""

import dbr.distributed.links as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
