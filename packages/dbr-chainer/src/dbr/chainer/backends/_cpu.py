"""``chainer.backends._cpu``: the CPU device and array transfer, dbr.core.backend's."""

from dbr.core import backend as _backend

__all__ = ["CpuDevice"]

CpuDevice = _backend.CpuDevice
_to_cpu = _backend.to_cpu  # Chainer's own code (and tests) call this private name
