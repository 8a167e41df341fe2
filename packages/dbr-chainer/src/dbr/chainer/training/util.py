"""``chainer.training.util``: ``get_trigger`` (dbr.training's)."""

from dbr.training import get_trigger

__all__ = ["get_trigger"]
