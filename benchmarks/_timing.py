"""Timing shared by the benchmarks."""

import gc
import statistics
import time


def best_ms(fn, repeat):
    """Best-of-``repeat`` milliseconds of ``fn()``, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def median_and_best_us(fn, repeat, clock=time.perf_counter):
    """Median and best microseconds per op over ``repeat`` calls of ``fn()``, which returns
    its op count; after one warm-up call, with a garbage collection before each call.

    ``clock`` is the wall clock by default; ``time.thread_time`` counts only the CPU
    time of the calling thread, which a machine shared with other jobs disturbs less.
    """
    fn()
    per_op = []
    for _ in range(repeat):
        gc.collect()
        start = clock()
        n_ops = fn()
        per_op.append((clock() - start) / n_ops * 1e6)
    return statistics.median(per_op), min(per_op)
