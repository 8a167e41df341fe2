"""``chainer.utils.type_check``: ``dbr.core.type_check``'s names, the same objects."""

import dbr.core.type_check as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
