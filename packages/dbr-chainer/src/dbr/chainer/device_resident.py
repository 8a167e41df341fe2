"""``chainer.device_resident``: ``dbr.core.device_resident``'s names, the same objects."""

import dbr.core.device_resident as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
