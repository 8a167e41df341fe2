"""``chainer.backends``: ``cuda`` (:mod:`dbr.chainer.backends.cuda`), ``intel64`` and ``_cpu``."""

from dbr.chainer.backends import _cpu as _cpu
from dbr.chainer.backends import cuda, intel64

__all__ = ["cuda", "intel64"]
