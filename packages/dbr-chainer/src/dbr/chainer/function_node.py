"""``chainer.function_node``: ``dbr.core.function_node``'s names (and ``grad``), dbr's objects."""

import dbr.core.function_node as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target, {"grad": "dbr.core"})
