"""``chainer.serializers``: ``dbr.core.serializers``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.serializers.npz`` and
``dbr.chainer.serializers.hdf5`` are ``dbr.core.serializers.npz`` and
``dbr.core.serializers.hdf5`` (see :func:`dbr.chainer._forward.mirror_submodules`).
"""

import dbr.core.serializers as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
mirror_submodules(globals(), "dbr.core.serializers")

# As Chainer's package does, import both submodules (they are dbr.core's modules).
from dbr.chainer.serializers import hdf5, npz  # noqa: E402, F401
