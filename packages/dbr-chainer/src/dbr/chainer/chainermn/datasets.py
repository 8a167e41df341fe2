"""``chainermn.datasets``: ``dbr.distributed.datasets``'s names, the same objects.

A package: ChainerMN's dataset modules (``scatter``, ``empty_dataset``) are
``dbr.distributed.datasets`` itself, which holds what ChainerMN spreads over them, so
that ``mock.patch`` on them patches what dbr calls.
"""

import dbr.distributed.datasets as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.datasets"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "scatter": _TARGET,
        "empty_dataset": _TARGET,
    },
)
