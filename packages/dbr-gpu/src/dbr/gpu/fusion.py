"""Fusion of a chain of elementwise operations into one CuPy kernel."""

import functools

import numpy

from dbr.gpu import _cupy

__all__ = ["array_module", "fuse"]


def array_module(*args):
    """The array module to call ufuncs through in a function decorated with :func:`fuse`.

    ``numpy`` for NumPy arrays and scalars; CuPy for CuPy arrays; while
    ``cupy.fuse`` traces the function, the module of CuPy's fusion ufuncs,
    which record each call into the fused kernel (NumPy's own ufuncs do not
    accept the traced variables). Works without CuPy installed.

    Example:
        >>> import numpy
        >>> array_module(numpy.ones(2)) is numpy
        True
    """
    cupy = _cupy.cupy
    if cupy is None:
        return numpy
    return cupy.get_array_module(*args)


def fuse(*, kernel_name=None):
    """Decorate a function of elementwise array operations so that it runs as one kernel.

    Called with a CuPy array among its positional arguments, the function
    runs through ``cupy.fuse``: one kernel for the whole chain, built once per
    decorated function (CuPy caches the binaries per dtypes and ndim).
    Called with NumPy arrays or scalars only, the plain function runs, so one
    definition serves both devices and gives the same values. Write the body
    with operators, and call ufuncs through :func:`array_module`
    (``xp = array_module(x); xp.exp(x)``): NumPy's on NumPy arrays, CuPy's
    fusion ufuncs while ``cupy.fuse`` traces the function (NumPy's ufuncs
    reject its traced variables). Positional arguments only, as ``cupy.fuse``.

    Args:
        kernel_name (str or None): the fused kernel's name; ``dbr_`` followed
            by the function's name when None.

    Returns:
        A decorator; the decorated function keeps the wrapped one's name and
        docstring.

    Example:
        >>> @fuse()
        ... def axpy(a, x, y):
        ...     return a * x + y
        >>> import numpy
        >>> axpy(2.0, numpy.ones(3), numpy.arange(3.0))
        array([2., 3., 4.])
    """

    def decorate(func):
        name = kernel_name or f"dbr_{func.__name__}"
        fused = None

        @functools.wraps(func)
        def call(*args):
            nonlocal fused
            cupy = _cupy.cupy
            if cupy is None or not any(isinstance(a, cupy.ndarray) for a in args):
                return func(*args)
            if fused is None:
                fused = _cupy.require(f"dbr.gpu.fuse({name!r})").fuse(kernel_name=name)(func)
            return fused(*args)

        return call

    return decorate
