"""``chainer.serializer``: the base classes of serializers, dbr.core.serializers'."""

import dbr.core.serializers as _target
from dbr.chainer._forward import forward
from dbr.core.serializers import AbstractSerializer, Deserializer, Serializer

__getattr__, __dir__ = forward(globals(), _target)
__all__ = ["AbstractSerializer", "Deserializer", "Serializer"]
