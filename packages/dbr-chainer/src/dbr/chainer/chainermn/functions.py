"""``chainermn.functions``: ``dbr.distributed.functions``'s names, the same objects."""

import dbr.distributed.functions as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
