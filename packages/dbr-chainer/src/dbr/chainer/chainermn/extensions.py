"""``chainermn.extensions``: ``dbr.distributed.extensions``'s names, the same objects.

A package: ChainerMN's extension modules (``checkpoint``, ``_multi_node_snapshot``, ...)
are ``dbr.distributed.extensions`` itself, which holds what ChainerMN spreads over them,
so that ``mock.patch`` on them patches what dbr calls.
"""

import dbr.distributed.extensions as _target
from dbr.chainer._forward import forward, mirror_submodules

_TARGET = "dbr.distributed.extensions"

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    _TARGET,
    renames={
        "allreduce_persistent": _TARGET,
        "checkpoint": _TARGET,
        "multi_node_evaluator": _TARGET,
        "_multi_node_snapshot": _TARGET,
        "observation_aggregator": _TARGET,
        "multi_node_early_stopping_trigger": _TARGET,
    },
)
