"""``chainer.utils``: dbr.core.utils' helpers (force_array, size_of_shape, sum_to, tempdir, ...).

``to_coo``, ``CooMatrix`` and ``get_order`` are dbr.functions', ``get_conv_outsize`` and
``get_deconv_outsize`` dbr.functions.conv's, ``WalkerAlias`` is dbr.links';
``type_check``, ``argument``, ``conv``, ``conv_nd``, ``array``, ``sparse``, ``walker_alias``,
``experimental``, ``nondeterministic``, ``imgproc`` and ``cache`` are submodules, and
``collections_abc`` is :mod:`collections.abc`, as in Chainer.
"""

import collections.abc as collections_abc

import dbr.core.utils as _target
from dbr.chainer._forward import forward
from dbr.chainer.utils import type_check

# As in Chainer, these names are the functions, not their submodules of the same name.
from dbr.chainer.utils.experimental import experimental
from dbr.chainer.utils.nondeterministic import nondeterministic

__getattr__, __dir__ = forward(
    globals(),
    _target,
    {
        "to_coo": "dbr.functions",
        "CooMatrix": "dbr.functions",
        "get_order": "dbr.functions.math.sparse_matmul",
        "get_conv_outsize": "dbr.functions.conv",
        "get_deconv_outsize": "dbr.functions.conv",
        "WalkerAlias": "dbr.links",
    },
)
__all__ = [
    "CooMatrix", "WalkerAlias", "collections_abc", "experimental", "force_array", "force_type",
    "get_conv_outsize", "get_deconv_outsize", "get_order", "nondeterministic", "size_of_shape",
    "sum_to", "tempdir", "to_coo", "type_check",
]  # fmt: skip
