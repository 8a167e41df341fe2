"""``chainer.link``: ``dbr.core.link``'s names, the same objects."""

import dbr.core.link as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
