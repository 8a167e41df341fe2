"""``chainer.function_node``: ``dbr.core.function_node``'s names, the same objects."""

import dbr.core.function_node as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
