"""``chainer.backend``: devices and array modules, from dbr.core.backend.

``get_device``, ``get_device_from_array``, ``get_array_module``,
``using_device``, ``copyto``, ``Device`` and ``CpuDevice`` are dbr.core's;
``GpuDevice`` is dbr.gpu's, imported when first asked for (dbr-chainer[gpu]).
"""

import dbr.core.backend as _target
from dbr.chainer._forward import forward

_forward_getattr, __dir__ = forward(globals(), _target)
_CHAINER_NAMES = (
    "CpuDevice", "Device", "GpuDevice", "copyto", "get_array_module", "get_device",
    "get_device_from_array", "using_device",
)  # fmt: skip
__all__ = list(_CHAINER_NAMES)


def __getattr__(name):
    if name == "GpuDevice":
        import dbr.gpu

        return dbr.gpu.GpuDevice
    return _forward_getattr(name)
