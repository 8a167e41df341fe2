"""``chainermn.communicators``: ``dbr.distributed.communicators``'s names, the same objects.

A package: ChainerMN's communicator modules (``naive_communicator``,
``_communication_utility``, ...) are ``dbr.distributed.communicators`` itself, which
holds what ChainerMN spreads over them, so that ``mock.patch`` on them patches what dbr
calls.
"""

import dbr.distributed.communicators as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.communicators"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "communicator_base": _TARGET,
        "mpi_communicator_base": _TARGET,
        "naive_communicator": _TARGET,
        "flat_communicator": _TARGET,
        "pure_nccl_communicator": _TARGET,
        "non_cuda_aware_communicator": _TARGET,
        "dummy_communicator": _TARGET,
        "_communication_utility": _TARGET,
    },
)
