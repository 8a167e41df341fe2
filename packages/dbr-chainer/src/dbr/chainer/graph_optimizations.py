"""``chainer.graph_optimizations``: ``dbr.core.graph_optimizations``'s names, the same objects.

Chainer's modules ``static_graph`` (the decorator and ``ScheduleManager``)
and ``static_graph_utilities`` (``static_code``) are both dbr's
``dbr.core.graph_optimizations._decorators``.
"""

import dbr.core.graph_optimizations as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    "dbr.core.graph_optimizations",
    renames={
        "static_graph": "dbr.core.graph_optimizations._decorators",
        "static_graph_utilities": "dbr.core.graph_optimizations._decorators",
    },
)
