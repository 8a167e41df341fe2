"""Timing shared by the benchmarks."""

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
