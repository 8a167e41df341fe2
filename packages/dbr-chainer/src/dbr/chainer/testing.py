"""``chainer.testing``: ``dbr.core.testing``'s names, the same objects."""

import dbr.core.testing as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
