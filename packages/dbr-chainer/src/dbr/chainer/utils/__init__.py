"""``chainer.utils``: dbr.core.utils' helpers (force_array, size_of_shape, tempdir, ...).

``to_coo`` and ``CooMatrix`` are dbr.functions', ``WalkerAlias`` is dbr.links';
``type_check``, ``argument``, ``conv`` and ``array`` are submodules, and
``collections_abc`` is :mod:`collections.abc`, as in Chainer.
"""

import collections.abc as collections_abc
import warnings

import dbr.core.utils as _target
from dbr.chainer._forward import forward
from dbr.chainer.utils import type_check

__getattr__, __dir__ = forward(
    globals(),
    _target,
    {"to_coo": "dbr.functions", "CooMatrix": "dbr.functions", "WalkerAlias": "dbr.links"},
)
__all__ = [
    "CooMatrix", "WalkerAlias", "collections_abc", "experimental", "force_array", "force_type",
    "size_of_shape", "tempdir", "to_coo", "type_check",
]  # fmt: skip


def experimental(api_name):
    """Warn (FutureWarning) that ``api_name`` is experimental, as Chainer's API marks do.

    dbr marks none of its own objects experimental; this is for code that
    calls Chainer's helper itself. ``dbr.chainer.disable_experimental_feature_warning
    = True`` silences it.

    Args:
        api_name (str): the name of the experimental function or class.
    """
    if not isinstance(api_name, str):
        raise TypeError(
            f"experimental: expected api_name to be a str, got {type(api_name).__name__}"
        )
    import dbr.chainer

    if not dbr.chainer.disable_experimental_feature_warning:
        warnings.warn(
            f"{api_name} is experimental. The interface can change in the future.",
            FutureWarning,
            stacklevel=3,
        )
