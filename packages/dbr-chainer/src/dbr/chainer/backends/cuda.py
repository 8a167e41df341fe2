"""``chainer.backends.cuda`` (also ``chainer.cuda``): CuPy and GPU arrays, through dbr.

Importing it never imports CuPy. ``to_cpu``, ``get_array_module`` and
``get_device_from_array`` are dbr.core.backend's. ``cupy``, ``available``,
``cudnn_enabled``, ``ndarray``, ``Device``, ``Event`` and ``Stream`` are found
when first asked for, through dbr.gpu when dbr-gpu is installed
(``pip install 'dbr-chainer[gpu]'``): without it, or without CuPy, ``cupy``
is None and ``available`` is False. ``should_use_cudnn`` and
``should_use_cudnn_tensor_core`` answer from ``config`` as Chainer's (False
without cuDNN, which dbr reaches through dbr.gpu.cudnn). ``GpuDevice``, ``elementwise``,
``reduce``, ``raw`` and ``fuse`` are dbr.gpu's; ``get_device_from_id`` gives
dbr.gpu's device for an id ``>= 0`` and, as Chainer's, :data:`DummyDevice`
(the CPU, doing nothing) for None or a negative id.
"""

import functools as _functools
import warnings as _warnings

import numpy as _numpy

from dbr.core import backend as _backend
from dbr.core import config
from dbr.core.backend import get_array_module, get_device_from_array, to_cpu

_GPU_NAMES = frozenset({"GpuDevice", "elementwise", "fuse", "raw", "reduce"})
_CUPY_CUDA_NAMES = frozenset({"Device", "Event", "Stream"})
_FOUND_WHEN_ASKED = frozenset({"available", "cudnn_enabled", "cupy", "ndarray"})
__all__ = [
    "DummyDevice", "DummyDeviceType", "check_cuda_available", "clear_memo", "config", "copy",
    "get_array_module", "get_cudnn_dropout_states", "get_cudnn_dropout_states_core",
    "get_device", "get_device_from_array", "get_device_from_id", "get_max_workspace_size",
    "memoize", "set_max_workspace_size", "should_use_cudnn", "should_use_cudnn_tensor_core",
    "to_cpu", "to_gpu",
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


def _cudnn():
    """dbr.gpu.cudnn when cuDNN can be used, else None."""
    gpu = _gpu()
    if gpu is None or not gpu.available or not gpu.cudnn.available():
        return None
    return gpu.cudnn


def should_use_cudnn(level, lowest_version=0):
    """Whether to use cuDNN at ``level``, from ``config.use_cudnn``, as Chainer decides.

    False without cuDNN or when its version is below ``lowest_version``;
    otherwise ``'==always'`` needs ``use_cudnn == 'always'`` and ``'>=auto'``
    accepts ``'always'`` or ``'auto'``.

    Args:
        level (str): ``'==always'`` or ``'>=auto'``.
        lowest_version (int): the lowest cuDNN version accepted (``8000`` for 8.0).

    Raises:
        ValueError: with cuDNN, an unknown ``level`` or ``config.use_cudnn`` value.
    """
    cudnn = _cudnn()
    if cudnn is None or cudnn.version() < lowest_version:
        return False
    return cudnn.should_use_cudnn(level)


_TENSOR_CORE_MODES = ("always", "auto", "never")


def should_use_cudnn_tensor_core(dtype):
    """Whether cuDNN may use Tensor Cores for ``dtype``, from ``config.use_cudnn_tensor_core``.

    ``'always'`` is True and ``'never'`` False, as in Chainer; ``'auto'`` is
    True only for float16 with cuDNN on a GPU with Tensor Cores.

    Raises:
        ValueError: ``config.use_cudnn_tensor_core`` is not 'always', 'auto' or 'never'.
    """
    gpu = _gpu()
    if gpu is not None:
        return gpu.cudnn.should_use_cudnn_tensor_core(dtype)
    mode = config.use_cudnn_tensor_core
    if mode not in _TENSOR_CORE_MODES:
        raise ValueError(
            f"config.use_cudnn_tensor_core must be 'always', 'auto' or 'never', got {mode!r}"
        )
    return mode == "always"


def get_max_workspace_size():
    """Return 0, as Chainer does without cuDNN.

    Raises:
        NotImplementedError: cuDNN is available: dbr's cuDNN path
            (cudnn-frontend) sizes each graph's workspace from CuPy's memory
            pool and has no maximum to read.
    """
    if _cudnn() is not None:
        raise NotImplementedError(
            "get_max_workspace_size: dbr's cuDNN convolutions (dbr.gpu.cudnn) take each "
            "graph's workspace from CuPy's memory pool and have no maximum workspace size"
        )
    return 0


def set_max_workspace_size(size):
    """Do nothing, as Chainer does without cuDNN.

    Raises:
        NotImplementedError: cuDNN is available: dbr's cuDNN path has no
            maximum workspace size to set (see :func:`get_max_workspace_size`).
    """
    if _cudnn() is not None:
        raise NotImplementedError(
            f"set_max_workspace_size({size!r}): dbr's cuDNN convolutions (dbr.gpu.cudnn) "
            "take each graph's workspace from CuPy's memory pool and have no maximum to set"
        )


def memoize(for_each_device=False):
    """Decorator caching a function's result per arguments (and device), through CuPy.

    It is ``cupy.memoize(for_each_device)`` when CuPy can be used; otherwise
    it caches nothing and returns the function's result each call, as Chainer's.
    """
    cupy = _cupy()
    if cupy is not None and _gpu().available:
        return cupy.memoize(for_each_device)

    def decorator(function):
        @_functools.wraps(function)
        def call(*args, **kwargs):
            return function(*args, **kwargs)

        return call

    return decorator


def clear_memo():
    """Clear the results cached by :func:`memoize` (``cupy.clear_memo``); nothing without CuPy."""
    cupy = _cupy()
    if cupy is not None and _gpu().available:
        cupy.clear_memo()


def get_device(*args):
    """Deprecated (as in Chainer): use :func:`get_device_from_id` or ``get_device_from_array``.

    Returns the device of the first argument that is a GPU id (an int), a
    CuPy array or a ``cupy.cuda.Device``, and :data:`DummyDevice` if none is.
    """
    _warnings.warn(
        "get_device is deprecated. Please use get_device_from_id or get_device_from_array "
        "instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    for arg in args:
        if isinstance(arg, (int, _numpy.integer)) and not isinstance(arg, bool):
            check_cuda_available()
            return get_device_from_id(int(arg))
        cupy = _cupy()
        if cupy is None:
            continue
        if isinstance(arg, cupy.ndarray):
            return arg.device
        if isinstance(arg, cupy.cuda.Device):
            return arg
    return DummyDevice


def copy(array, out=None, out_device=None, stream=None):
    """Copy a CuPy array, into ``out`` or a new array on ``out_device`` (the array's own if None).

    Args:
        array (cupy.ndarray): the array to copy.
        out (cupy.ndarray): where to copy it; ``out_device`` is ignored when given.
        out_device: the new array's GPU: an id, a ``cupy.cuda.Device`` or a CuPy array.
        stream: must be None (as in Chainer, copies run on the current stream).

    Raises:
        RuntimeError: CuPy or a usable GPU is missing.
        ValueError: ``stream`` is given.
    """
    check_cuda_available()
    if stream is not None:
        raise ValueError(f"copy: stream must be None, got {stream!r}")
    cupy = _cupy()
    if out is None:
        if out_device is None:
            target = array.device
        elif isinstance(out_device, cupy.ndarray):
            target = out_device.device
        else:
            target = cupy.cuda.Device(int(getattr(out_device, "id", out_device)))
        with target:
            out = cupy.empty_like(array)
    with array.device:
        cupy.copyto(out, array)
    return out


def get_cudnn_dropout_states():
    """Raise RuntimeError: dbr's dropout does not use cuDNN's dropout states."""
    raise RuntimeError(
        "get_cudnn_dropout_states: dbr has no cuDNN dropout states (CuPy 14 dropped "
        "cupy.cudnn, and dbr's dropout does not use cuDNN)"
    )


def get_cudnn_dropout_states_core(thread_id):
    """Raise RuntimeError: dbr's dropout does not use cuDNN's dropout states."""
    raise RuntimeError(
        f"get_cudnn_dropout_states_core({thread_id!r}): dbr has no cuDNN dropout states "
        "(CuPy 14 dropped cupy.cudnn, and dbr's dropout does not use cuDNN)"
    )
