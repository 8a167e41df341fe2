"""``chainermn.links``: ``dbr.distributed.links``'s names, the same objects.

A package: ChainerMN's link modules (``batch_normalization``, ``n_step_rnn``, ...) are
``dbr.distributed.links`` itself, which holds what ChainerMN spreads over them, so that
``mock.patch`` on them patches what dbr calls.
"""

import dbr.distributed.links as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.links"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "batch_normalization": _TARGET,
        "create_mnbn_model": _TARGET,
        "multi_node_chain_list": _TARGET,
        "n_step_rnn": _TARGET,
    },
)
