"""``chainer.sequential``: ``dbr.core.sequential``'s names, the same objects."""

import dbr.core.sequential as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
