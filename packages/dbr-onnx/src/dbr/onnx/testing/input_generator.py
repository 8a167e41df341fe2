"""Deterministic example inputs for export tests: ramps holding negatives, zero and fractions."""

import numpy


def _ramp(shape, dtype, negative, bias):
    shape = tuple(int(n) for n in shape)
    values = numpy.arange(int(numpy.prod(shape, dtype=numpy.int64))).reshape(shape)
    if negative:
        values = values - values.size // 2
    if numpy.dtype(dtype).kind == "f":
        values = values * 0.5
    return (values + bias).astype(dtype)


def increasing(*shape, dtype=numpy.float32):
    """A monotonically increasing array of ``shape``, centred on zero.

    Values step by 0.5 for float dtypes (by 1 otherwise) and start at minus
    half the size, so the array holds negatives, zero and non-integers; the
    first input to try for a test.

    >>> increasing(2, 3)
    array([[-1.5, -1. , -0.5],
           [ 0. ,  0.5,  1. ]], dtype=float32)

    Args:
        *shape (int): the shape.
        dtype: the dtype (float32 by default).

    Returns:
        numpy.ndarray
    """
    return _ramp(shape, dtype, True, 0)


def nonzero_increasing(*shape, dtype=numpy.float32, bias=1e-7):
    """:func:`increasing` moved by ``bias`` so that no value is zero (inputs of divisors).

    Args:
        *shape (int): the shape.
        dtype: float32 or float64.
        bias (float): added to every value.

    Returns:
        numpy.ndarray
    """
    if numpy.dtype(dtype) not in (numpy.float32, numpy.float64):
        raise ValueError(
            f"nonzero_increasing: dtype must be float32 or float64, got {numpy.dtype(dtype)}"
        )
    return _ramp(shape, dtype, True, bias)


def positive_increasing(*shape, dtype=numpy.float32, bias=1e-7):
    """An increasing array of positive values from ``bias`` (inputs of log, sqrt, ...).

    >>> positive_increasing(2, 2, bias=0)
    array([[0. , 0.5],
           [1. , 1.5]], dtype=float32)

    Args:
        *shape (int): the shape.
        dtype: the dtype (float32 by default).
        bias (float): added to every value.

    Returns:
        numpy.ndarray
    """
    return _ramp(shape, dtype, False, bias)
