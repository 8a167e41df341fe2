"""``chainer.backends.cuda`` (also ``chainer.cuda``): CuPy and GPU arrays, through dbr.

Importing it never imports CuPy. ``to_cpu``, ``get_array_module`` and
``get_device_from_array`` are dbr.core.backend's. ``cupy``, ``available``,
``cudnn_enabled``, ``ndarray``, ``Device``, ``Event`` and ``Stream`` are found
when first asked for, through dbr.gpu when dbr-gpu is installed
(``pip install 'dbr-chainer[gpu]'``): without it, or without CuPy, ``cupy``
is None and ``available`` is False. ``GpuDevice``, ``elementwise``,
``reduce``, ``raw`` and ``fuse`` are dbr.gpu's; ``get_device_from_id`` gives
dbr.gpu's device for an id ``>= 0`` and, as Chainer's, :data:`DummyDevice`
(the CPU, doing nothing) for None or a negative id.
"""

import numpy as _numpy

from dbr.core import backend as _backend
from dbr.core.backend import get_array_module, get_device_from_array, to_cpu

_GPU_NAMES = frozenset({"GpuDevice", "elementwise", "fuse", "raw", "reduce"})
_CUPY_CUDA_NAMES = frozenset({"Device", "Event", "Stream"})
_FOUND_WHEN_ASKED = frozenset({"available", "cudnn_enabled", "cupy", "ndarray"})
__all__ = [
    "DummyDevice", "DummyDeviceType", "check_cuda_available", "get_array_module",
    "get_device_from_array", "get_device_from_id", "to_cpu", "to_gpu",
    *sorted(_GPU_NAMES | _CUPY_CUDA_NAMES | _FOUND_WHEN_ASKED),
]  # fmt: skip
_INSTALL_HINT = "pip install 'dbr-chainer[gpu]' and CuPy ('dbr-gpu[cuda12]' or '[cuda13]')"


class _NoCupyArray:
    """Stands for ``cupy.ndarray`` without CuPy, as Chainer's: no array is an instance."""


def _gpu():
    """dbr.gpu, or None when dbr-gpu is not installed."""
    try:
        import dbr.gpu
    except ModuleNotFoundError as e:
        if e.name not in ("dbr.gpu", "dbr"):
            raise
        return None
    return dbr.gpu


def _cupy():
    gpu = _gpu()
    return None if gpu is None else gpu.cupy


def __getattr__(name):
    if name == "cupy":
        value = _cupy()
    elif name == "available":
        gpu = _gpu()
        value = gpu is not None and gpu.available
    elif name == "cudnn_enabled":
        gpu = _gpu()
        value = gpu is not None and gpu.available and gpu.cudnn.available()
    elif name == "ndarray":
        cupy = _cupy()
        value = _NoCupyArray if cupy is None else cupy.ndarray
    elif name in _CUPY_CUDA_NAMES:
        cupy = _cupy()
        if cupy is None:
            raise AttributeError(
                f"module {__name__!r} has no attribute {name!r}: it is cupy.cuda.{name}, "
                f"and CuPy is not installed; {_INSTALL_HINT}"
            )
        value = getattr(cupy.cuda, name)
    elif name in _GPU_NAMES:
        gpu = _gpu()
        if gpu is None:
            raise AttributeError(
                f"module {__name__!r} has no attribute {name!r}: it is dbr.gpu.{name}, "
                f"and dbr-gpu is not installed; {_INSTALL_HINT}"
            )
        value = getattr(gpu, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class DummyDeviceType:
    """Stands for the CPU where Chainer code expects a ``cupy.cuda.Device``: it does nothing.

    Its ``id`` and ``int()`` are -1; ``use()``, ``synchronize()`` and ``with``
    do nothing; every instance equals every other.
    """

    id = -1

    def __int__(self):
        return -1

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None

    def use(self):
        """Do nothing: the CPU is always current."""

    def synchronize(self):
        """Do nothing: CPU work is synchronous."""

    def __eq__(self, other):
        return isinstance(other, DummyDeviceType)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(DummyDeviceType)

    def __repr__(self):
        return "DummyDevice"


#: The one :class:`DummyDeviceType` that :func:`get_device_from_id` returns for the CPU.
DummyDevice = DummyDeviceType()


def get_device_from_id(device_id):
    """Return GPU ``device_id``'s device (dbr.gpu's), or :data:`DummyDevice` for None or an id < 0.

    Raises:
        TypeError: ``device_id`` is neither None nor an int.
        RuntimeError: an id ``>= 0`` is asked for without dbr-gpu, CuPy or a usable GPU.
    """
    if device_id is None:
        return DummyDevice
    if isinstance(device_id, bool) or not isinstance(device_id, (int, _numpy.integer)):
        raise TypeError(f"get_device_from_id: device_id must be an int or None, got {device_id!r}")
    if device_id < 0:
        return DummyDevice
    gpu = _gpu()
    if gpu is None:
        raise RuntimeError(
            f"get_device_from_id: GPU {int(device_id)} needs dbr-gpu, which is not installed; "
            f"{_INSTALL_HINT}"
        )
    return gpu.get_device_from_id(device_id)


def check_cuda_available():
    """Raise RuntimeError, saying what is missing, unless CuPy and a CUDA GPU can be used."""
    gpu = _gpu()
    if gpu is None:
        raise RuntimeError(f"CUDA is not available: dbr-gpu is not installed; {_INSTALL_HINT}")
    gpu.require("chainer.backends.cuda")


def to_gpu(array, device=None):
    """Copy an array, or a (nested) list/tuple/dict of arrays, to a GPU as CuPy arrays.

    Arrays already on that GPU are returned as they are; None stays None.

    Args:
        array: a NumPy or CuPy array, None, or a list, tuple or dict of them.
        device: the GPU: its id (int, ``>= 0``), a dbr device such as
            ``get_device('@cupy:1')``, a ``cupy.cuda.Device``, or None for
            the current GPU.

    Returns:
        The CuPy array(s), in the same container type.

    Raises:
        ValueError: ``device`` is not a GPU (a negative id or the CPU).
        RuntimeError: dbr-gpu, CuPy or a usable GPU is missing.
    """
    if device is None:
        spec = "@cupy"
    elif isinstance(device, _backend.Device):
        spec = device
    elif hasattr(device, "id") and not isinstance(device, int):
        spec = f"@cupy:{int(device.id)}"
    else:
        spec = device
    target = _backend.get_device(spec)
    if target.xp is _backend.cpu.xp:
        raise ValueError(f"to_gpu: device must be a GPU (an id >= 0 or '@cupy:N'), got {device!r}")
    return target.send(array)
