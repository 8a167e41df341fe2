"""``chainer.datasets``: dbr.datasets' datasets and loaders (TupleDataset, get_mnist, ...).

It is a package like Chainer's: ``dbr.chainer.datasets.tuple_dataset`` is
``dbr.datasets.tuple_dataset`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.datasets as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.datasets")
