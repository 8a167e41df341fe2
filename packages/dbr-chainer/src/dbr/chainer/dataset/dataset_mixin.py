"""``chainer.dataset.dataset_mixin``: ``dbr.datasets.dataset_mixin``'s names, the same objects."""

import dbr.datasets.dataset_mixin as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
