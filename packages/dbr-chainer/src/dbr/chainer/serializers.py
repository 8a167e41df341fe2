"""``chainer.serializers``: ``dbr.core.serializers``'s names, the same objects."""

import dbr.core.serializers as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
