"""``chainer.dataset.convert``: ``dbr.datasets.convert``'s names, the same objects."""

import dbr.datasets.convert as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
