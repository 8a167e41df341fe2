"""``chainermn.iterators``: ``dbr.distributed.iterators``'s names, the same objects."""

import dbr.distributed.iterators as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
