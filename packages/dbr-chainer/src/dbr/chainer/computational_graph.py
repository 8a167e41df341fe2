"""``chainer.computational_graph``: ``dbr.core.computational_graph``'s names, the same objects."""

import dbr.core.computational_graph as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
