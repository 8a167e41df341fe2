"""``chainer.dataset.download``: ``dbr.datasets.download``'s names, the same objects."""

import dbr.datasets.download as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
