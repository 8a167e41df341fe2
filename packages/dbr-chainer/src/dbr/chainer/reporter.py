"""``chainer.reporter``: ``dbr.core.reporter``'s names, the same objects."""

import dbr.core.reporter as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
