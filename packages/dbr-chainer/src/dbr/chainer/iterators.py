"""``chainer.iterators``: dbr.datasets' iterators (SerialIterator, MultiprocessIterator, ...)."""

import dbr.datasets as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
