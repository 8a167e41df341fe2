"""``chainer.backend``: devices and array modules, from dbr.core.backend.

``get_device``, ``get_device_from_array``, ``get_array_module``,
``using_device``, ``copyto``, ``Device`` and ``CpuDevice`` are dbr.core's;
``GpuDevice`` is dbr.gpu's, imported when first asked for (dbr-chainer[gpu]);
``cuda`` is :mod:`dbr.chainer.backends.cuda`, as Chainer's module imports it.
``ChainerxDevice`` stands for Chainer's ChainerX device: dbr has no ChainerX,
so no device is one and none can be made.
"""

import dbr.core.backend as _target
from dbr.chainer._forward import forward

_forward_getattr, __dir__ = forward(globals(), _target)
_CHAINER_NAMES = (
    "ChainerxDevice", "CpuDevice", "Device", "GpuDevice", "copyto", "get_array_module",
    "get_device", "get_device_from_array", "using_device",
)  # fmt: skip
__all__ = list(_CHAINER_NAMES)


def __getattr__(name):
    if name == "cuda":
        from dbr.chainer.backends import cuda

        return cuda
    if name == "GpuDevice":
        import dbr.gpu

        return dbr.gpu.GpuDevice
    return _forward_getattr(name)


class ChainerxDevice(_target.Device):
    """Chainer's ChainerX device; dbr has no ChainerX (``chainerx.is_available()`` is False).

    No device is an instance, so ``isinstance(device, ChainerxDevice)`` guards
    are False; making one raises RuntimeError.
    """

    def __init__(self, device):
        raise RuntimeError(
            f"ChainerxDevice: cannot make a ChainerX device for {device!r}: dbr has no ChainerX"
        )

    @staticmethod
    def from_array(array):
        """Return None: no array is a ChainerX array in dbr."""
        return None

    @staticmethod
    def from_fallback_device(device):
        """Raise RuntimeError: dbr has no ChainerX device to fall back from."""
        raise RuntimeError("ChainerxDevice.from_fallback_device: dbr has no ChainerX")
