"""dbr.gpu: the CUDA layer of dbr, through CuPy.

Importing it never fails for want of a GPU: ``available`` tells whether
CuPy and a CUDA device are usable, and everything that needs one raises a
RuntimeError saying whether CuPy or the GPU is missing (see :func:`require`).

- Devices: :class:`GpuDevice` (``'@cupy:N'``, registered with
  ``dbr.core.backend``, so ``get_device('@cupy:0')``, ``to_device`` of arrays,
  Variables and Links, and ``get_array_module`` of CuPy arrays work).
- :mod:`dbr.gpu.memory`: CuPy's device and pinned memory pools, limits,
  usage, and asynchronous host-to-device copies from pinned buffers.
- Kernels: :func:`elementwise`, :func:`reduce` and :func:`raw` build CuPy
  kernels once per definition (:func:`compile_count` counts the builds);
  :func:`fuse` fuses chains of elementwise operations.
- :mod:`dbr.gpu.cudnn`: convolutions (and other kernels) through NVIDIA's
  cudnn-frontend bindings, with im2col + cuBLAS as the fallback.
- :mod:`dbr.gpu.nccl`: an NCCL communicator for the GPUs of one machine.
"""

import importlib

from dbr.core import backend as _backend
from dbr.gpu._cupy import INSTALL_HINT, available, cupy, require, unavailable_reason

__all__ = [
    "INSTALL_HINT",
    "GpuDevice",
    "available",
    "compile_count",
    "cudnn",
    "cupy",
    "elementwise",
    "fuse",
    "get_device_from_id",
    "memory",
    "nccl",
    "raw",
    "reduce",
    "require",
    "unavailable_reason",
]

_LAZY = {
    "GpuDevice": "dbr.gpu.device",
    "get_device_from_id": "dbr.gpu.device",
    "elementwise": "dbr.gpu.kernels",
    "reduce": "dbr.gpu.kernels",
    "raw": "dbr.gpu.kernels",
    "compile_count": "dbr.gpu.kernels",
    "fuse": "dbr.gpu.fusion",
}
_SUBMODULES = ("cudnn", "memory", "nccl")


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"dbr.gpu.{name}")
    raise AttributeError(f"module 'dbr.gpu' has no attribute {name!r}")


def _resolve_device(spec):
    from dbr.gpu.device import resolve

    return resolve(spec)


def _device_of(array):
    from dbr.gpu.device import get_device_from_id

    return get_device_from_id(array.device.id)


_backend.register_device_resolver("@cupy", _resolve_device)
if cupy is not None:
    _backend.register_array_type(cupy.ndarray, cupy, _device_of)
