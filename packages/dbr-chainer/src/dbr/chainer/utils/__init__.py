"""``chainer.utils``: ``type_check`` and dbr.core.utils' array helpers (force_array, ...)."""

import dbr.core.utils as _target
from dbr.chainer._forward import forward
from dbr.chainer.utils import type_check

__getattr__, __dir__ = forward(globals(), _target)
__all__ = ["force_array", "force_type", "type_check"]
