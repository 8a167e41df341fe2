"""``chainer.gradient_check``: ``dbr.core.gradient_check``'s names (and ``assert_allclose``)."""

import dbr.core.gradient_check as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target, {"assert_allclose": "dbr.core.testing"})
