"""``chainer.utils.array``: ``size_of_shape`` (dbr.core.utils')."""

from dbr.core.utils import size_of_shape

__all__ = ["size_of_shape"]
