"""``chainer.dataset.iterator``: ``dbr.datasets.iterator``'s names, the same objects."""

import dbr.datasets.iterator as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
