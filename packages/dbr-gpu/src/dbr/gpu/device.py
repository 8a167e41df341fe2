"""The GPU device ``'@cupy:N'``: where CuPy arrays live, and how arrays get there.

:func:`resolve` serves ``dbr.core.backend.get_device`` for specifiers that
start with ``'@cupy'`` (``dbr.gpu`` registers it), so ``get_device('@cupy:0')``,
Chainer's ``get_device(0)``, ``Link.to_device('@cupy:0')`` and
``Variable.to_device('@cupy:0')`` all end here.
"""

import threading

import numpy

from dbr.core import backend
from dbr.gpu._cupy import require

__all__ = ["GpuDevice", "get_device_from_id", "resolve"]

_PREFIX = "@cupy"
_devices = {}
_devices_lock = threading.Lock()
_entered = threading.local()


def _check_id(cupy, device_id, who):
    count = cupy.cuda.runtime.getDeviceCount()
    if not 0 <= device_id < count:
        raise ValueError(
            f"{who}: there is no GPU {device_id}; {count} GPU(s) are visible "
            f"(ids 0 to {count - 1}, see CUDA_VISIBLE_DEVICES)"
        )


def _as_id(device_id, who):
    if isinstance(device_id, bool) or not isinstance(device_id, (int, numpy.integer)):
        raise TypeError(f"{who}: a GPU id must be an int, got {device_id!r}")
    return int(device_id)


class GpuDevice(backend.Device):
    """One CUDA GPU, ``'@cupy:N'``, whose arrays are ``cupy.ndarray``.

    Prefer :func:`get_device_from_id` (or ``dbr.core.backend.get_device``),
    which return one shared instance per GPU; instances compare and hash
    by name, so a new one equals the shared one.

    ``with device:`` makes the GPU current and restores the previously
    current GPU on exit (nesting is allowed, per thread); :meth:`use` makes
    it current for good.

    Args:
        device_id (int): the CUDA device index, ``0 <= device_id <`` the
            number of visible GPUs.

    Attributes:
        device_id (int): the CUDA device index.
        device (cupy.cuda.Device): CuPy's handle on the same GPU.
        name (str): ``'@cupy:<device_id>'``.
        xp: the ``cupy`` module.

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
        ValueError: ``device_id`` is out of range.
    """

    def __init__(self, device_id):
        device_id = _as_id(device_id, "GpuDevice")
        cupy = require(f"GpuDevice({device_id})")
        _check_id(cupy, device_id, "GpuDevice")
        from dbr.gpu import memory

        memory.install_pools()
        self.xp = cupy
        self.device_id = device_id
        self.device = cupy.cuda.Device(device_id)
        self.name = f"{_PREFIX}:{device_id}"

    def send_array(self, array):
        """Return ``array`` as a CuPy array on this GPU.

        A NumPy array or scalar is copied to the GPU (a scalar becomes a
        0-dimensional array); a CuPy array on another GPU is copied here; a
        CuPy array already on this GPU is returned as it is.

        Raises:
            TypeError: ``array`` is neither a NumPy nor a CuPy array or scalar.
        """
        cupy = self.xp
        if isinstance(array, cupy.ndarray):
            if array.device.id == self.device_id:
                return array
            with self:
                return cupy.copy(array)
        if isinstance(array, (numpy.ndarray, numpy.generic)):
            with self:
                return cupy.asarray(array)
        raise TypeError(
            f"{self.name}: can send only NumPy or CuPy arrays (or NumPy scalars) to a GPU, "
            f"got {type(array).__name__}"
        )

    def is_array_supported(self, array):
        """Whether ``array`` is a CuPy array on this GPU."""
        return isinstance(array, self.xp.ndarray) and array.device.id == self.device_id

    def use(self):
        """Make this GPU current in this thread."""
        self.device.use()

    def synchronize(self):
        """Wait until every kernel and copy queued on this GPU has finished."""
        self.device.synchronize()

    def __enter__(self):
        entered = self.xp.cuda.Device(self.device_id)
        entered.__enter__()
        stack = getattr(_entered, "stack", None)
        if stack is None:
            stack = _entered.stack = []
        stack.append(entered)
        return self

    def __exit__(self, *exc_info):
        _entered.stack.pop().__exit__(*exc_info)


def get_device_from_id(device_id):
    """Return the shared :class:`GpuDevice` of GPU ``device_id``.

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
        ValueError: there is no GPU ``device_id`` (the message gives the
            number of visible GPUs).
    """
    device_id = _as_id(device_id, "get_device_from_id")
    device = _devices.get(device_id)
    if device is not None:
        return device
    require(f"GPU device {_PREFIX}:{device_id}")
    with _devices_lock:
        device = _devices.get(device_id)
        if device is None:
            device = _devices[device_id] = GpuDevice(device_id)
    return device


def resolve(spec):
    """Return the :class:`GpuDevice` for ``'@cupy'`` (the current GPU) or ``'@cupy:N'``.

    Raises:
        ValueError: ``spec`` is malformed (``'@cupy:x'``), or GPU N does not exist.
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    prefix, colon, index = spec.partition(":")
    if prefix != _PREFIX or (colon and not (index.isascii() and index.isdigit())):
        raise ValueError(
            f"malformed GPU device specifier {spec!r}: expected '@cupy' (the current GPU) "
            "or '@cupy:N' with N a non-negative integer"
        )
    cupy = require(f"device {spec!r}")
    if not colon:
        return get_device_from_id(cupy.cuda.runtime.getDevice())
    return get_device_from_id(int(index))
