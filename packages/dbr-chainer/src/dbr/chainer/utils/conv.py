"""``chainer.utils.conv``: ``dbr.functions.conv``'s names, the same objects."""

import dbr.functions.conv as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
__all__ = list(_target.__all__)
