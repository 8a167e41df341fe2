"""``chainer.function_hook``: ``dbr.core.function_hook``'s names, the same objects."""

import dbr.core.function_hook as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
