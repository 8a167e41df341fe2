"""``chainer.training.trigger``: Chainer's old module of ``IntervalTrigger`` and ``get_trigger``.

Both are dbr.training's (``dbr.training.triggers``), the same objects.
"""

from dbr.training.triggers import IntervalTrigger, get_trigger

__all__ = ["IntervalTrigger", "get_trigger"]
