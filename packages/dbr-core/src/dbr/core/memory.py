"""Keeping the memory of freed arrays in the process (glibc only), on request.

NumPy takes every array's memory from ``malloc``. A training iteration makes
and frees the same large temporaries each time (im2col buffers, gates, their
gradients), and by default glibc hands the memory freed at the end of an
iteration back to the system once more than about twice the largest freed
block lies free at the top of the heap; the next iteration then faults every
page of it in again, zeroed by the kernel. A LeNet-5 step of batch 64 took
8,100 page faults and 42.6 ms that way on one thread, against 23.1 ms with
the memory kept (27.4 against 17.3 ms of CPU time in a later measurement,
``benchmarks/kernels.py --groups lenet1 --clock thread``).

:func:`keep_freed_memory` keeps it: blocks below :data:`MMAP_THRESHOLD`
come from the heap (glibc's own limit for the threshold it raises by itself)
and up to :data:`TRIM_THRESHOLD` of free memory stays at the top of the heap
for the next allocations. What it costs: the process holds up to 128 MiB of
freed heap that other processes could use, its resident size stays near its
peak between iterations, and the settings are the process's, so they apply
to every library in it (in an inference server that imports dbr they would
keep buffers that nothing allocates again).

So it is a choice, never a side effect of ``import dbr.core``. The
:class:`~dbr.training.Trainer` makes it when a run starts, a training process
being the case it is for; a hand-written training loop calls
:func:`keep_freed_memory` itself. The environment variable
``DBR_KEEP_FREED_MEMORY`` overrides both: ``1`` applies it when ``dbr.core``
is imported, ``0`` forbids it everywhere (:func:`keep_freed_memory` then
changes nothing). Where ``malloc`` is not glibc's (macOS, Windows, musl),
nothing changes.
"""

import ctypes
import os

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Blocks at least this large (bytes) are mapped for themselves and unmapped
#: when freed; smaller ones come from the heap. 32 MiB is the most glibc accepts.
MMAP_THRESHOLD = 32 << 20
#: Free memory (bytes) kept at the top of the heap before any is returned.
TRIM_THRESHOLD = 128 << 20

#: The environment variable: ``1`` applies the setting at import, ``0`` forbids it.
ENVIRONMENT_VARIABLE = "DBR_KEEP_FREED_MEMORY"


def _environment_setting():
    """``"0"``, ``"1"`` or ``""`` (unset or blank) from ``DBR_KEEP_FREED_MEMORY``."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"{ENVIRONMENT_VARIABLE}: expected 0 or 1, got {value!r}")
    return value


def keep_freed_memory():
    """Set glibc's ``mallopt`` thresholds so that freed array memory stays in the process.

    Does nothing when ``DBR_KEEP_FREED_MEMORY`` is ``0``. Calling it again is harmless.

    Returns:
        bool: True when both thresholds were set; False where the environment
        forbids it, the C library has no ``mallopt`` or it refused a value.

    Raises:
        ValueError: ``DBR_KEEP_FREED_MEMORY`` is set to something other than ``0``,
            ``1`` or nothing.
    """
    if _environment_setting() == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return (
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    )


def keeps_freed_memory_by_default():
    """Whether ``import dbr.core`` applies :func:`keep_freed_memory`: only when
    ``DBR_KEEP_FREED_MEMORY`` is ``1``.

    Raises:
        ValueError: ``DBR_KEEP_FREED_MEMORY`` is set to something other than ``0``,
            ``1`` or nothing.
    """
    return _environment_setting() == "1"
