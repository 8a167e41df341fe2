"""Random draws shared by the random initializers.

With ``rng=None`` the draws come from the array's own module
(``numpy.random`` or ``cupy.random``), so ``numpy.random.seed`` governs CPU
initialization as in Chainer. NumPy's samplers take no dtype and return
float64; CuPy's take one, and float16 is drawn in float32 there because
cuRAND has no half-precision sampler. The draws are cast when written.
"""

import numpy

from dbr.core import backend


def _draw(source, method, args, shape, dtype):
    if source is numpy.random or type(source).__module__.startswith("numpy."):
        return getattr(source, method)(*args, size=shape)
    draw_dtype = numpy.float64 if dtype == numpy.float64 else numpy.float32
    return getattr(source, method)(*args, size=shape, dtype=draw_dtype)


def _source(xp, rng):
    return xp.random if rng is None else rng


def fill_normal(array, scale, rng=None):
    """Overwrite ``array`` with draws from N(0, scale**2)."""
    source = _source(backend.get_array_module(array), rng)
    draws = _draw(source, "normal", (0.0, float(scale)), array.shape, array.dtype)
    backend.copyto(array, draws)


def fill_uniform(array, scale, rng=None):
    """Overwrite ``array`` with draws from U(-scale, scale)."""
    source = _source(backend.get_array_module(array), rng)
    draws = _draw(source, "uniform", (-float(scale), float(scale)), array.shape, array.dtype)
    backend.copyto(array, draws)


def standard_normal(xp, shape, dtype, rng=None):
    """Return draws from N(0, 1) of ``shape``, float32 or float64 as ``dtype`` needs.

    They come from ``rng`` when given (and live in its module), else from
    ``xp.random``.
    """
    return _draw(_source(xp, rng), "normal", (0.0, 1.0), shape, dtype)
