"""GPU memory: CuPy's device and pinned memory pools, and host-to-device copies.

dbr uses CuPy's default device memory pool and pinned (page-locked) host
memory pool: :func:`install_pools` makes them CuPy's allocators once per
process, at the first :class:`~dbr.gpu.GpuDevice` or the first call here. To
use another allocator, call ``cupy.cuda.set_allocator`` after that.

Device-pool functions act on one GPU: ``device`` (a specifier or Device),
else the current one, as CuPy's pool does.

:func:`async_to_device` copies a NumPy array to the GPU through page-locked
memory, asynchronously on a stream, so the copy overlaps host work and
kernels on other streams. The page-locked source must not be written again
until the stream has passed the copy: :class:`PinnedBuffer` waits for that
itself before it hands its memory out again, and without one the function
keeps its temporary page-locked block out of the pool until the copy is done.
"""

import threading

import numpy

from dbr.core import backend
from dbr.gpu._cupy import require

__all__ = [
    "PinnedBuffer",
    "async_to_device",
    "free_all_blocks",
    "install_pools",
    "memory_pool",
    "pinned_memory_pool",
    "set_limit",
    "usage",
]

_install_lock = threading.Lock()
_installed = False
_in_flight = []
_in_flight_lock = threading.Lock()


def install_pools():
    """Make CuPy's default device and pinned memory pools its allocators (once per process).

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    global _installed
    cupy = require("dbr.gpu.memory")
    if _installed:
        return
    with _install_lock:
        if not _installed:
            cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
            cupy.cuda.set_pinned_memory_allocator(cupy.get_default_pinned_memory_pool().malloc)
            _installed = True


def memory_pool():
    """Return CuPy's default device memory pool (``cupy.cuda.MemoryPool``), installed."""
    install_pools()
    return require("memory_pool()").get_default_memory_pool()


def pinned_memory_pool():
    """Return CuPy's default pinned memory pool (``cupy.cuda.PinnedMemoryPool``), installed."""
    install_pools()
    return require("pinned_memory_pool()").get_default_pinned_memory_pool()


def _gpu(device, who):
    if device is None:
        cupy = require(who)
        from dbr.gpu.device import get_device_from_id

        return get_device_from_id(cupy.cuda.runtime.getDevice())
    device = backend.get_device(device)
    if not hasattr(device, "device_id"):
        raise ValueError(f"{who}: {device} is not a GPU device; expected '@cupy:N'")
    return device


def set_limit(size=None, fraction=None, *, device=None):
    """Limit the device memory pool of one GPU; exactly one of ``size`` and ``fraction``.

    Allocations beyond the limit raise ``cupy.cuda.memory.OutOfMemoryError``
    (after the pool has freed its cached blocks). ``size=0`` removes the limit.

    Args:
        size (int): the limit in bytes, ``>= 0``.
        fraction (float): the limit as a fraction of the GPU's total memory, in ``[0, 1]``.
        device: the GPU (``'@cupy:N'``, a Device); the current GPU if None.

    Raises:
        ValueError: neither or both of ``size`` and ``fraction`` are given, or
            one is out of range.
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    if (size is None) == (fraction is None):
        raise ValueError(
            f"set_limit: give exactly one of size and fraction, got size={size!r}, "
            f"fraction={fraction!r}"
        )
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValueError(f"set_limit: size must be an int >= 0 (bytes), got {size!r}")
    if fraction is not None and not 0 <= fraction <= 1:
        raise ValueError(f"set_limit: fraction must be in [0, 1], got {fraction!r}")
    gpu = _gpu(device, "set_limit")
    with gpu:
        memory_pool().set_limit(size=size, fraction=fraction)


def free_all_blocks(*, device=None):
    """Return the cached free blocks of one GPU's pool and all of the pinned pool to CUDA.

    Memory held by live arrays stays allocated.

    Args:
        device: the GPU (``'@cupy:N'``, a Device); the current GPU if None.

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    gpu = _gpu(device, "free_all_blocks")
    with gpu:
        memory_pool().free_all_blocks()
    pinned_memory_pool().free_all_blocks()


def usage(*, device=None):
    """Return the memory use of one GPU's pool and of the pinned pool.

    Args:
        device: the GPU (``'@cupy:N'``, a Device); the current GPU if None.

    Returns:
        dict: ``used_bytes`` (held by live arrays), ``total_bytes`` (allocated
        from CUDA: used plus cached free blocks), ``free_bytes`` (cached free
        blocks), ``limit`` (bytes, 0 for none), ``free_blocks`` (cached device
        blocks) and ``pinned_free_blocks`` (cached page-locked blocks), all ints.

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    gpu = _gpu(device, "usage")
    with gpu:
        pool = memory_pool()
        stats = {
            "used_bytes": pool.used_bytes(),
            "total_bytes": pool.total_bytes(),
            "free_bytes": pool.free_bytes(),
            "limit": pool.get_limit(),
            "free_blocks": pool.n_free_blocks(),
        }
    stats["pinned_free_blocks"] = pinned_memory_pool().n_free_blocks()
    return stats


class PinnedBuffer:
    """A reusable page-locked host buffer, viewed as a NumPy array of any shape and dtype.

    :meth:`array` returns a C-contiguous NumPy view of the buffer, growing it
    (a new block from the pinned pool) when it is too small. After queueing
    an asynchronous copy that reads the view, call :meth:`record` with its
    stream: the next :meth:`array` first waits until the stream has passed
    the copy, so the memory is never overwritten while it is being read.

    Args:
        nbytes (int): the initial capacity in bytes (allocated at first use).
    """

    def __init__(self, nbytes=0):
        self._capacity = int(nbytes)
        self._memory = None
        self._event = None

    @property
    def nbytes(self):
        """The capacity in bytes (0 before the first allocation)."""
        return 0 if self._memory is None else self._capacity

    def synchronize(self):
        """Wait until the copies recorded with :meth:`record` have read the buffer."""
        if self._event is not None:
            self._event.synchronize()
            self._event = None

    def array(self, shape, dtype):
        """Return the buffer as a writable NumPy array of ``shape`` and ``dtype``.

        Waits for recorded copies first; grows the buffer if needed (the
        previous contents are not kept).

        Raises:
            RuntimeError: CuPy is not installed, or no GPU can be used.
        """
        cupy = require("PinnedBuffer")
        dtype = numpy.dtype(dtype)
        shape = (int(shape),) if numpy.ndim(shape) == 0 else tuple(int(n) for n in shape)
        size = int(numpy.prod(shape, dtype=numpy.int64))
        nbytes = size * dtype.itemsize
        self.synchronize()
        if self._memory is None or nbytes > self._capacity:
            install_pools()
            self._capacity = max(nbytes, self._capacity, 1)
            self._memory = None
            self._memory = cupy.cuda.alloc_pinned_memory(self._capacity)
        return numpy.frombuffer(self._memory, dtype, size).reshape(shape)

    def record(self, stream):
        """Note that a copy reading this buffer was queued on ``stream`` (a ``cupy.cuda.Stream``).

        Returns:
            cupy.cuda.Event: recorded on ``stream`` after the copy.
        """
        event = require("PinnedBuffer.record").cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        self._event = event
        return event


def _keep_until_done(event, memory):
    with _in_flight_lock:
        _in_flight[:] = [(e, m) for e, m in _in_flight if not e.done]
        _in_flight.append((event, memory))


def async_to_device(array, stream=None, device=None, *, buffer=None):
    """Copy a host array to a GPU through page-locked memory, asynchronously on ``stream``.

    The array is first copied into page-locked memory (``buffer`` if given,
    else a block from the pinned pool, kept out of the pool until the copy
    is done), then ``cupy.ndarray.set(..., stream=stream)`` queues the copy
    and the function returns at once. The result may be used by work
    queued later on ``stream``; work on another stream must first wait for
    it (``stream.synchronize()``, or an event recorded on ``stream``).

    Args:
        array (numpy.ndarray or numpy.generic): the host data, any shape and
            dtype. A CuPy array is sent with ``GpuDevice.send_array`` instead.
        stream (cupy.cuda.Stream): where the copy runs; the device's current
            stream if None (then later work on that stream is ordered after it).
        device: the target GPU (``'@cupy:N'``, a Device); the current GPU if None.
        buffer (PinnedBuffer): a page-locked buffer to reuse; its next use
            waits until this copy has read it.

    Returns:
        cupy.ndarray: a C-contiguous array of the same shape and dtype on the GPU.

    Raises:
        RuntimeError: CuPy is not installed, or no GPU can be used.
    """
    gpu = _gpu(device, "async_to_device")
    cupy = gpu.xp
    if isinstance(array, cupy.ndarray):
        return gpu.send_array(array)
    array = numpy.asarray(array)
    with gpu:
        if stream is None:
            stream = cupy.cuda.get_current_stream()
        if buffer is None:
            memory = cupy.cuda.alloc_pinned_memory(max(array.nbytes, 1))
            host = numpy.frombuffer(memory, array.dtype, array.size).reshape(array.shape)
        else:
            host = buffer.array(array.shape, array.dtype)
        host[...] = array
        result = cupy.empty(array.shape, array.dtype)
        result.set(host, stream=stream)
        if buffer is None:
            event = cupy.cuda.Event(block=False, disable_timing=True)
            event.record(stream)
            _keep_until_done(event, memory)
        else:
            buffer.record(stream)
    return result
