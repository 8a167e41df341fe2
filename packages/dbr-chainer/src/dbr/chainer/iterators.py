"""``chainer.iterators``: dbr.datasets' iterators (SerialIterator, MultiprocessIterator, ...).

It is a package like Chainer's: ``dbr.chainer.iterators.serial_iterator`` is
``dbr.datasets.serial_iterator`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.datasets as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.datasets")
