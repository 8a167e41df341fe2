"""Small array and argument utilities shared by dbr packages."""

import contextlib
import difflib
import operator
import shutil
import tempfile
import warnings

import numpy

from dbr.core import backend
from dbr.core.configuration import config

_ndarray = numpy.ndarray


class PerformanceWarning(RuntimeWarning):
    """Warns that a computation takes a slow path (Chainer's ``chainer.warnings`` category)."""


_float32 = numpy.dtype(numpy.float32)


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


def accumulation_dtype(*dtypes):
    """The dtype that products and sums of floating arrays of ``dtypes`` are computed in.

    Their NumPy promotion, and float32 at least: BLAS has no half-precision
    GEMM, and float16 sums keep float32's precision until the one rounding to
    the result's dtype.

    >>> accumulation_dtype(numpy.float16, numpy.float16), accumulation_dtype("f4", "f8")
    (dtype('float32'), dtype('float64'))
    """
    return numpy.promote_types(numpy.result_type(*dtypes), _float32)


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


def size_of_shape(shape):
    """Return the number of elements of an array of ``shape``, a Python int (1 for ``()``).

    Args:
        shape (tuple of int): the shape; every length a non-negative integer.

    Raises:
        TypeError: ``shape`` is not a sequence of integers.
        ValueError: a length is negative.

    >>> size_of_shape((2, 3, 4))
    24
    """
    size = 1
    try:
        lengths = [operator.index(n) for n in shape]
    except TypeError:
        raise TypeError(
            f"size_of_shape: expected shape to be a sequence of ints, got {shape!r}"
        ) from None
    for n in lengths:
        if n < 0:
            raise ValueError(f"size_of_shape: expected non-negative lengths, got shape {shape!r}")
        size *= n
    return size


@contextlib.contextmanager
def tempdir(**kwargs):
    """Create a temporary directory, yield its path, and remove it with its contents on exit.

    Args:
        **kwargs: passed to ``tempfile.mkdtemp`` (``suffix``, ``prefix``, ``dir``).

    >>> import os
    >>> with tempdir() as path:
    ...     os.path.isdir(path)
    True
    """
    path = tempfile.mkdtemp(**kwargs)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def check_unexpected_kwargs(kwargs, **unexpected):
    """Raise ValueError if ``kwargs`` holds a name of ``unexpected``, with that name's message.

    Args:
        kwargs (dict): the keyword arguments a function received.
        **unexpected: ``name=message`` for arguments that are no longer
            accepted, the message saying what to do instead.
    """
    for name, message in unexpected.items():
        if name in kwargs:
            raise ValueError(message)


def assert_kwargs_empty(kwargs):
    """Raise TypeError naming the keyword arguments left in ``kwargs``, if any."""
    if kwargs:
        names = ", ".join(repr(name) for name in sorted(kwargs))
        raise TypeError(f"got unexpected keyword argument(s) {names}")


def parse_kwargs(kwargs, *name_and_values, **unexpected):
    """Take the named arguments out of ``kwargs``, refusing any other one.

    Args:
        kwargs (dict): the keyword arguments a function received; the parsed
            names are removed from it.
        *name_and_values: ``(name, default)`` pairs, one per accepted argument.
        **unexpected: ``name=message`` for arguments no longer accepted
            (see :func:`check_unexpected_kwargs`).

    Returns:
        tuple: the value of each name in ``name_and_values``, its default when
        ``kwargs`` does not hold it.

    Raises:
        ValueError: ``kwargs`` holds a name of ``unexpected``.
        TypeError: ``kwargs`` holds any other name not in ``name_and_values``.

    >>> parse_kwargs({"train": False}, ("train", True), ("debug", False))
    (False, False)
    """
    values = tuple(kwargs.pop(name, default) for name, default in name_and_values)
    check_unexpected_kwargs(kwargs, **unexpected)
    assert_kwargs_empty(kwargs)
    return values


def docstring_tail(tail):
    """Decorator appending ``tail``, docstring sections that several functions share.

    ``tail`` starts with a blank line and is indented as a function
    docstring's body is, so that the function's ``__doc__`` reads as if the
    sections were written in it: a family of functions with the same
    arguments (the unary math functions, the MNIST-like loaders) keeps each
    its own summary and example, and the ``Args:``/``Returns:`` text once.

    Args:
        tail (str): the sections to append.

    Returns:
        A decorator that appends them to the function's docstring and
        returns the function.
    """

    def decorate(function):
        function.__doc__ = function.__doc__.rstrip(" ") + tail + "    "
        return function

    return decorate


def missing_attribute(module_name, name, names):
    """The AttributeError for ``module_name.name``, suggesting the closest of ``names``.

    For a module's ``__getattr__`` (PEP 562): a misspelt public name such as
    ``extensions.PrintReprot`` gets "did you mean 'PrintReport'?".
    """
    public = [n for n in names if not n.startswith("_")]
    close = difflib.get_close_matches(name, public, n=3, cutoff=0.75)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return AttributeError(f"module {module_name!r} has no attribute {name!r}{hint}")


def sum_to(x, shape):
    """Sum the array ``x`` down to ``shape`` (its broadcast source): an array, not a Variable.

    Leading axes are summed away and axes of length 1 in ``shape`` are summed
    keeping the axis; ``x`` itself is returned when it already has ``shape``.
    ``dbr.functions.sum_to`` is the differentiable version.

    Args:
        x (array): the array.
        shape (tuple of int): the target shape.

    Raises:
        TypeError: ``x`` is a Variable.

    >>> sum_to(numpy.ones((2, 3)), (1, 3))
    array([[2., 2., 2.]])
    """
    if hasattr(x, "_node"):
        raise TypeError("sum_to: expected an array, got a Variable; use dbr.functions.sum_to")
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    lead_axes = tuple(range(lead))
    kept_axes = tuple(lead + i for i, n in enumerate(shape) if n == 1)
    y = x.sum(lead_axes + kept_axes, keepdims=True)
    return y.squeeze(lead_axes) if lead else y


def _warn_deprecated_array_helper(name, instead):
    warnings.warn(
        f"dbr.core.utils.{name} is deprecated (as chainer.utils.array.{name}); use {instead}",
        DeprecationWarning,
        stacklevel=3,
    )


def as_vec(x):
    """Deprecated (as in Chainer): ``x`` flattened to 1-D; ``x`` itself if already 1-D."""
    _warn_deprecated_array_helper("as_vec", "x.ravel()")
    return x if x.ndim == 1 else x.ravel()


def as_mat(x):
    """Deprecated (as in Chainer): ``x`` as a matrix ``(len(x), -1)``; ``x`` if already 2-D."""
    _warn_deprecated_array_helper("as_mat", "x.reshape(len(x), -1)")
    return x if x.ndim == 2 else x.reshape(len(x), -1)


def empty_like(x):
    """Deprecated (as in Chainer): an uninitialised array like ``x``, on ``x``'s device."""
    _warn_deprecated_array_helper("empty_like", "xp.empty_like(x)")
    return backend.get_array_module(x).empty_like(x)


def nondeterministic(f_name):
    """Warn that ``f_name`` may give different results run to run, if asked to.

    It warns (RuntimeWarning) only while ``config.warn_nondeterministic`` is
    True, as Chainer's does.

    Args:
        f_name (str): the name of the nondeterministic code, for the message.
    """
    if config.warn_nondeterministic:
        warnings.warn(
            "Potentially non-deterministic code is being executed while "
            f"config.warn_nondeterministic is set. Source: {f_name}",
            RuntimeWarning,
            stacklevel=2,
        )
