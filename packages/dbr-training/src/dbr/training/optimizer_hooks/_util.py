"""Argument checks and GPU helpers shared by the optimizer hooks."""

import math
import numbers

import numpy

from dbr.core import backend
from dbr.training.optimizer import gpu_reduction

# S, the accumulation type, is that of the output array the caller passes.
_SQUARED_SUM_REDUCTION = {
    "in_params": "T x",
    "out_params": "S y",
    "map_expr": "(S)x * (S)x",
    "reduce_expr": "a + b",
    "post_map_expr": "y = a",
    "identity": "0",
    "name": "dbr_squared_sum",
}


def check_real(who, name, value, *, minimum=None, positive=False):
    """Return ``value`` as a float after checking that it is a finite real number.

    Raises:
        TypeError: ``value`` is not a real number (bool is refused).
        ValueError: ``value`` is not finite, is below ``minimum``, or is not
            positive when ``positive`` is set.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{who}: {name} must be a real number, got {value!r} ({type(value).__name__})"
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{who}: {name} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{who}: {name} must be positive, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{who}: {name} must be >= {minimum}, got {value!r}")
    return value


def accumulation_dtype(*dtypes):
    """The dtype norms of arrays of ``dtypes`` are accumulated in: float32 or wider."""
    return numpy.result_type(numpy.float32, *dtypes)


def squared_sum(x, out=None):
    """Sum of the squares of the CuPy array ``x``, computed on its (current) device.

    Args:
        x (cupy.ndarray): any shape, float16, float32 or float64.
        out (cupy.ndarray): a 0-dimensional array receiving the sum; by
            default a new one of :func:`accumulation_dtype` of ``x``.

    Returns:
        cupy.ndarray: ``out``; nothing is copied to the host.
    """
    if out is None:
        out = backend.get_array_module(x).empty((), accumulation_dtype(x.dtype))
    gpu_reduction(_SQUARED_SUM_REDUCTION)(x, out)
    return out
