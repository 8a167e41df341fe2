"""``chainer.link_hook``: ``dbr.core.link_hook``'s names, the same objects."""

import dbr.core.link_hook as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
