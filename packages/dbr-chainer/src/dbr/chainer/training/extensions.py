"""``chainer.training.extensions``: ``dbr.training.extensions``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.training.extensions._snapshot`` is
``dbr.training.extensions._snapshot`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.training.extensions as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    "dbr.training.extensions",
    renames={
        "fail_on_nonnumber": "dbr.training.extensions.fail_on_non_number",
        "variable_unchain": "dbr.training.extensions.unchain_variables",
    },
)
