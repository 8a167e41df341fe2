"""``chainer.functions``: ``dbr.functions``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.functions.math.einsum`` is
``dbr.functions.math.einsum`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.functions as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    "dbr.functions",
    renames={
        "math.basic_math": "dbr.core.ops.arithmetic",
        "math.exponential_m1": "dbr.functions.math.expm1",
        "math.logarithm_1p": "dbr.functions.math.log1p",
    },
)
