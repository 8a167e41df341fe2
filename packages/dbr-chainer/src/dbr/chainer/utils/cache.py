"""``chainer.utils.cache``: ``cached_property``, which is :class:`functools.cached_property`.

Chainer's computes the value on first access and keeps it in the instance,
as the standard library's does.
"""

from functools import cached_property

__all__ = ["cached_property"]
