"""``chainermn.extensions``: ``dbr.distributed.extensions``'s names, the same objects."""

import dbr.distributed.extensions as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
