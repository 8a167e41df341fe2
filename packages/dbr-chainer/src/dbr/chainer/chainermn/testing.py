"""``chainermn.testing``: ``dbr.distributed.testing``'s names, the same objects.

A package: ChainerMN's ``testing.device`` is ``dbr.distributed.testing`` itself.
"""

import dbr.distributed.testing as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.testing"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "device": _TARGET,
    },
)
