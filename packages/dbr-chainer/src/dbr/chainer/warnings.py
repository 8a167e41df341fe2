"""``chainer.warnings``: ``PerformanceWarning``, dbr.core.utils'."""

from dbr.core.utils import PerformanceWarning

__all__ = ["PerformanceWarning"]
