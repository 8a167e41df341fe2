"""``chainer.configuration``: ``dbr.core.configuration``'s names, the same objects."""

import dbr.core.configuration as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
