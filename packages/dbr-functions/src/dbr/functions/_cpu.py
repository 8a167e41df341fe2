"""Elementwise NumPy work split into cache-sized blocks and over a small thread pool.

NumPy runs one pass over memory per ufunc, on one thread. A function that
chains several passes (sigmoid: scale, tanh, scale, shift) over an array
larger than the CPU's cache reads and writes main memory on each of them;
:func:`blockwise` runs the whole chain on one block of rows at a time, so
that only the first read and last write leave the cache, and hands the
blocks to ``config.cpu_threads`` threads (NumPy releases the GIL inside its
ufunc loops). Arrays below :data:`~dbr.functions._tuning.MIN_PARALLEL_SIZE`
elements run as one block on the calling thread, as before.

``config.cpu_threads`` (None by default) is the number of threads; None
follows ``OMP_NUM_THREADS`` when it is set and the CPU count otherwise. Set it
to 1 to turn the pool off. Only NumPy arrays are split; CuPy arrays go
through the GPU kernels of the callers.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy

from dbr.core.configuration import config
from dbr.functions import _tuning

_lock = threading.Lock()
_pools = {}
# Set in the threads running blocks: a body that splits work again runs it serially.
_in_block = threading.local()


def cpu_threads():
    """The number of threads elementwise CPU work may use (at least 1).

    Raises:
        ValueError: ``config.cpu_threads`` is neither None nor a positive int.
    """
    n = getattr(config, "cpu_threads", None)
    if n is None:
        env = os.environ.get("OMP_NUM_THREADS", "").strip()
        return int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"config.cpu_threads: expected None or a positive int, got {n!r}")
    return n


def _executor(threads):
    """The persistent pool of ``threads - 1`` workers (the caller is the last thread).

    One pool per size, never shut down: another thread (with its own
    ``config.cpu_threads``) may be submitting to a pool of another size.
    """
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads - 1, thread_name_prefix="dbr-cpu")
        return pool


def _forget_pools():
    # A forked child inherits the pool objects but not their threads: it starts new ones.
    global _lock, _pools
    _lock = threading.Lock()
    _pools = {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def blockwise(body, out, *inputs, min_size=None, cache_blocks=True):
    """Run ``body(out[r], *(a[r] for a in inputs))`` over blocks of rows ``r``.

    ``body`` computes a result into its first argument from the others,
    which share ``out``'s first axis; each output row depends only on the
    input rows at its position, so the result does not depend on how the
    rows are split. Arrays of fewer than ``min_size`` elements (or of a
    single row) run in one call on the calling thread.

    Args:
        body (callable): ``body(out_block, *input_blocks)``.
        out (numpy.ndarray): the output, written in place.
        *inputs (numpy.ndarray): arrays of ``out``'s length along axis 0
            (usually of its shape, or broadcast views of it).
        min_size (int or None): the size from which ``out`` is split
            (None: :data:`~dbr.functions._tuning.MIN_PARALLEL_SIZE`).
        cache_blocks (bool): split into blocks of about
            :data:`~dbr.functions._tuning.CACHE_BLOCK_SIZE` elements, for a
            ``body`` of several passes; if False, into one part per thread.

    Returns:
        ``out``.
    """
    size = out.size
    if min_size is None:
        min_size = _tuning.MIN_PARALLEL_SIZE
    if size < min_size or out.ndim == 0 or out.shape[0] < 2 or getattr(_in_block, "on", False):
        body(out, *inputs)
        return out
    rows = out.shape[0]
    threads = min(cpu_threads(), rows)
    if cache_blocks:
        step = max(1, _tuning.CACHE_BLOCK_SIZE * rows // size)
    else:
        step = -(-rows // threads)
    starts = range(0, rows, step)
    threads = min(threads, len(starts))
    if threads == 1 and len(starts) == 1:
        body(out, *inputs)
        return out

    # numpy.errstate is a context variable, which the pool's threads do not inherit.
    errors = numpy.geterr()

    def run(part):
        _in_block.on = True
        try:
            with numpy.errstate(**errors):
                for start in starts[part::threads]:
                    r = slice(start, start + step)
                    body(out[r], *(a[r] for a in inputs))
        finally:
            _in_block.on = False

    if threads == 1:
        run(0)
        return out
    futures = [_executor(threads).submit(run, part) for part in range(1, threads)]
    run(0)
    for future in futures:
        future.result()
    return out
