"""``chainer.function_hooks``: ``dbr.core.function_hooks``'s names, the same objects."""

import dbr.core.function_hooks as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
