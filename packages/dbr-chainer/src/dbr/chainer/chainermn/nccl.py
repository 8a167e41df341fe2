"""``chainermn.nccl``: ``dbr.gpu.nccl``'s names, loaded when first asked for.

Importing this module needs neither dbr-gpu nor a GPU, as importing ChainerMN's
does not; asking for a name needs ``dbr-chainer[gpu]``.
"""

import importlib


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("dbr.gpu.nccl"), name)
    globals()[name] = value
    return value
