"""``chainer.utils.nondeterministic``: ``nondeterministic``, dbr.core.utils'."""

from dbr.core.utils import nondeterministic

__all__ = ["nondeterministic"]
