"""``chainer.initializer``: the ``Initializer`` base and ``get_fans``, dbr.core.initializers'."""

import dbr.core.initializers.initializer as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target, {"get_fans": "dbr.core.initializers.fans"})
