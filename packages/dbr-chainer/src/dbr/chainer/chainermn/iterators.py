"""``chainermn.iterators``: ``dbr.distributed.iterators``'s names, the same objects.

A package: ChainerMN's iterator modules (``multi_node_iterator``,
``synchronized_iterator``) are ``dbr.distributed.iterators`` itself, which holds what
ChainerMN spreads over them, so that ``mock.patch`` on them patches what dbr calls.
"""

import dbr.distributed.iterators as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.iterators"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "multi_node_iterator": _TARGET,
        "synchronized_iterator": _TARGET,
    },
)
