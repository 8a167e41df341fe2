"""``chainermn.global_except_hook``: dbr.distributed.global_except_hook's own objects."""

import dbr.distributed.global_except_hook as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
