"""``chainer.backends.cuda`` (also ``chainer.cuda``): CuPy and GPU arrays, through dbr.

Importing it never imports CuPy. ``to_cpu``, ``get_array_module`` and
``get_device_from_array`` are dbr.core.backend's. ``cupy``, ``available``,
``cudnn_enabled``, ``ndarray``, ``Device``, ``Event`` and ``Stream`` are found
when first asked for, through dbr.gpu when dbr-gpu is installed
(``pip install 'dbr-chainer[gpu]'``): without it, or without CuPy, ``cupy``
is None and ``available`` is False. ``get_device_from_id``, ``GpuDevice``,
``elementwise``, ``reduce``, ``raw`` and ``fuse`` are dbr.gpu's.
"""

from dbr.core import backend as _backend
from dbr.core.backend import get_array_module, get_device_from_array, to_cpu

_GPU_NAMES = frozenset({"GpuDevice", "elementwise", "fuse", "get_device_from_id", "raw", "reduce"})
_CUPY_CUDA_NAMES = frozenset({"Device", "Event", "Stream"})
_FOUND_WHEN_ASKED = frozenset({"available", "cudnn_enabled", "cupy", "ndarray"})
__all__ = [
    "check_cuda_available", "get_array_module", "get_device_from_array", "to_cpu", "to_gpu",
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
