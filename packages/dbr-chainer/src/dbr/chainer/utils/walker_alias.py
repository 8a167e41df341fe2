"""``chainer.utils.walker_alias``: ``WalkerAlias``, dbr.links'."""

from dbr.links.loss.walker_alias import WalkerAlias

__all__ = ["WalkerAlias"]
