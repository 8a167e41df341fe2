"""Allocating initialized arrays, and turning link arguments into initializers."""

import contextlib
import numbers

import numpy

from dbr.core import backend
from dbr.core.configuration import config
from dbr.core.initializers.constant import Constant, _is_array
from dbr.core.initializers.normal import LeCunNormal


def generate_array(initializer, shape, xp, dtype=None, device=None):
    """Allocate an array of ``shape`` and fill it with ``initializer``.

    The dtype is the initializer's ``dtype`` attribute when it has one,
    else ``dtype``, else ``config.dtype`` (float32 unless configured).

    Args:
        initializer (callable): Fills an array in place, typically an
            :class:`~dbr.core.initializers.Initializer`.
        shape (int or tuple of ints): The shape of the array.
        xp (module): ``numpy`` or ``cupy``, the module that allocates it.
        dtype: The dtype to use when the initializer names none.
        device: A device specifier (see :func:`dbr.core.backend.get_device`)
            to allocate on, whose module must be ``xp``; None allocates on
            ``xp``'s current device.

    Returns:
        The new, initialized array.

    Raises:
        ValueError: ``dtype`` conflicts with the initializer's dtype, or
            ``device`` does not use ``xp``.

    >>> import numpy
    >>> generate_array(Constant(2.0), (2,), numpy)
    array([2., 2.], dtype=float32)
    """
    initializer_dtype = getattr(initializer, "dtype", None)
    if initializer_dtype is not None:
        initializer_dtype = numpy.dtype(initializer_dtype)
        if dtype is not None and numpy.dtype(dtype) != initializer_dtype:
            raise ValueError(
                f"generate_array: dtype {numpy.dtype(dtype)} conflicts with "
                f"{type(initializer).__name__}'s dtype {initializer_dtype}"
            )
        dtype = initializer_dtype
    elif dtype is None:
        dtype = config.dtype
    dtype = numpy.dtype(dtype)

    if device is None:
        context = contextlib.nullcontext()
    else:
        device = backend.get_device(device)
        if device.xp is not xp:
            raise ValueError(
                f"generate_array: device {device} uses {device.xp.__name__}, "
                f"not the requested module {xp.__name__}"
            )
        context = backend.using_device(device)
    with context:
        array = xp.empty(shape, dtype=dtype)
        initializer(array)
    return array


def _get_initializer(initializer):
    """Turn the ``initialW``-style argument of a link into an initializer.

    ``None`` gives :class:`~dbr.core.initializers.LeCunNormal` (the default
    weight initializer); a scalar or an array gives a
    :class:`~dbr.core.initializers.Constant` writing it; any other callable
    is returned as it is. Also public as :func:`get_initializer`.

    Args:
        initializer: None, a scalar, a NumPy/CuPy array or a callable that
            fills an array in place.

    Returns:
        A callable initializer.

    Raises:
        TypeError: ``initializer`` is none of these.
    """
    if initializer is None:
        return LeCunNormal()
    if isinstance(initializer, (numbers.Number, numpy.generic)) or _is_array(initializer):
        return Constant(initializer)
    if not callable(initializer):
        raise TypeError(
            "an initializer must be None, a scalar, an array or a callable, "
            f"got {type(initializer).__name__}"
        )
    return initializer


get_initializer = _get_initializer
