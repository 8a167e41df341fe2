"""``chainer.distributions.utils``: ``_modified_xlogx``, dbr.functions' ``xlogx``."""

from dbr.functions.distributions._utils import xlogx as _modified_xlogx  # noqa: F401
