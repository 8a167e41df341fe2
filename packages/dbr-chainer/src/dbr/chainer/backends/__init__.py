"""``chainer.backends``: holds ``cuda`` (:mod:`dbr.chainer.backends.cuda`)."""

from dbr.chainer.backends import cuda

__all__ = ["cuda"]
