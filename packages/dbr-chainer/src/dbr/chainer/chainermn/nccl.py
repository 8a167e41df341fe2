"""``chainermn.nccl``: ``dbr.gpu.nccl``'s names, loaded when first asked for.

Importing this module needs neither dbr-gpu nor a GPU, as importing ChainerMN's
does not; asking for a name needs ``dbr-chainer[gpu]``.
"""

import importlib


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module("dbr.gpu.nccl")
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("dbr.gpu"):
            raise
        # An AttributeError, so that getattr(nccl, name, default) and hasattr work.
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r}: it needs dbr-gpu "
            "(pip install 'dbr-chainer[gpu]')"
        ) from e
    value = getattr(module, name)
    globals()[name] = value
    return value
