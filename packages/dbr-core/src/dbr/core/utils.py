"""Small array utilities shared by dbr packages."""

import numpy

from dbr.core import backend

_ndarray = numpy.ndarray


def force_array(x, dtype=None):
    """Return ``x`` as an array of ``dtype`` (NumPy turns 0-d results into scalars).

    Args:
        x: an array or a NumPy scalar.
        dtype: the dtype to cast to, or None to keep ``x``'s.

    Returns:
        An array of the same array module as ``x``.
    """
    if type(x) is _ndarray:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    xp = backend.get_array_module(x)
    x = xp.asarray(x)
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


def force_type(dtype, value):
    """Return the scalar or array ``value`` converted to ``dtype``.

    Scalars become NumPy scalars of ``dtype`` (so that NEP 50 does not promote
    the arrays they meet); arrays are cast only when their dtype differs.
    """
    dtype = numpy.dtype(dtype)
    if numpy.isscalar(value):
        return dtype.type(value)
    if value.dtype != dtype:
        return value.astype(dtype, copy=False)
    return value
