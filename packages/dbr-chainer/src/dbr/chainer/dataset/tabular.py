"""``chainer.dataset.tabular``: ``dbr.datasets.tabular``'s names, the same objects.

It is a package like Chainer's, whose submodules (``tabular_dataset``,
``from_data``, ``delegate_dataset``, ``_slice``, ...) are dbr.datasets.tabular's
(see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.datasets.tabular as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.datasets.tabular")
