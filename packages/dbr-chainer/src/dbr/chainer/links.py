"""``chainer.links``: ``dbr.links``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.links.model.vision.resnet`` is
``dbr.links.model.vision.resnet`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.links as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(
    globals(),
    "dbr.links",
    renames={"activation.simplified_dropconnect": "dbr.links.connection.simplified_dropconnect"},
)
