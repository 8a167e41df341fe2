"""Random draws shared by the noise functions, from the array module's global generator.

On the CPU they come from ``numpy.random``, so ``numpy.random.seed`` makes them
reproducible; on the GPU from ``cupy.random`` (seeded by ``cupy.random.seed``).
"""

import numpy

from dbr.core.utils import force_array

_float64 = numpy.dtype(numpy.float64)


def keep_flags(xp, shape, ratio):
    """Return a boolean array of ``shape`` that is True with probability ``1 - ratio``.

    The uniforms come from ``xp.random.rand(*shape)``, the call Chainer makes
    (and its tests mock).
    """
    if xp is numpy:
        u = numpy.random.rand(*shape)
    else:
        u = xp.random.rand(*shape, dtype=numpy.float32)
    return force_array(u >= ratio)


# Uniforms drawn at a time by skip_uniforms: 512 KiB of float64, reused from the heap.
_SKIP_CHUNK = 1 << 16


def skip_uniforms(n):
    """Advance ``numpy.random`` as ``numpy.random.random_sample(n)`` would, keeping nothing.

    The legacy generator draws uniforms one after the other, so drawing them in
    chunks leaves it in the same state as one draw of ``n``.
    """
    while n > 0:
        numpy.random.random_sample(min(n, _SKIP_CHUNK))
        n -= _SKIP_CHUNK


def gpu_sample_dtype(dtype):
    """The dtype ``cupy.random`` draws ``dtype`` samples in (it has float32 and float64 only)."""
    return _float64 if dtype == _float64 else numpy.dtype(numpy.float32)


def check_ratio(ratio, who, upper_inclusive=False):
    """Raise a ValueError naming ``who`` unless ``0 <= ratio < 1`` (or ``<= 1``)."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, numpy.number)):
        raise TypeError(f"{who}: expected ratio to be a float, got {type(ratio).__name__}")
    upper_ok = ratio <= 1 if upper_inclusive else ratio < 1
    if not (ratio >= 0 and upper_ok):
        interval = "[0, 1]" if upper_inclusive else "[0, 1)"
        raise ValueError(f"{who}: expected ratio in {interval}, got {ratio!r}")
