"""``chainermn``: ``dbr.distributed``'s names, the same objects (ChainerMN v7's API on MPI).

Imported only when used: ``import dbr.chainer`` loads neither this module nor
mpi4py. Its submodules (``links``, ``functions``, ``extensions``,
``iterators``, ``datasets``, ``optimizers``, ``communicators``, ``testing``,
``global_except_hook``) forward to dbr.distributed's; ``nccl`` to dbr.gpu's.
"""

import dbr.distributed as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
