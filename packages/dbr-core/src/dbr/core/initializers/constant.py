"""Initializers that write fixed values: constants and the identity."""

import numpy

from dbr.core import backend
from dbr.core.initializers.initializer import Initializer


class Constant(Initializer):
    """Fills an array with a constant, or with an array broadcast to its shape.

    Args:
        fill_value (scalar or array): The value to write. An array (NumPy or
            CuPy) is broadcast to the shape of the array being initialized
            and sent to its device.
        dtype: The dtype the initializer is meant for, or None for any.
            When given, an array ``fill_value`` is converted to it.

    >>> import numpy
    >>> w = numpy.empty((2, 3), numpy.float32)
    >>> Constant(numpy.array([1, 2, 3]))(w)
    >>> w
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)
    """

    def __init__(self, fill_value, dtype=None):
        super().__init__(dtype)
        if self.dtype is not None and _is_array(fill_value):
            fill_value = fill_value.astype(self.dtype, copy=False)
        self.fill_value = fill_value

    def _fill(self, array):
        fill_value = self.fill_value
        if _is_array(fill_value):
            if not _broadcasts_to(fill_value.shape, array.shape):
                raise ValueError(
                    f"Constant: a fill value of shape {fill_value.shape} cannot be "
                    f"broadcast to the array's shape {array.shape}"
                )
            fill_value = backend.get_device_from_array(array).send(fill_value)
        array[...] = fill_value


def _is_array(value):
    if isinstance(value, numpy.ndarray):
        return True
    return backend.get_array_module(value) is not numpy and isinstance(
        value, backend.get_array_types()
    )


def _broadcasts_to(shape, target):
    try:
        return numpy.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


class Zero(Constant):
    """Fills an array with zeros.

    Args:
        dtype: The dtype the initializer is meant for, or None for any.
    """

    def __init__(self, dtype=None):
        super().__init__(0.0, dtype)


class One(Constant):
    """Fills an array with ones.

    Args:
        dtype: The dtype the initializer is meant for, or None for any.
    """

    def __init__(self, dtype=None):
        super().__init__(1.0, dtype)


class NaN(Constant):
    """Fills an array with NaN, to make use of an uninitialized parameter visible.

    Args:
        dtype: The dtype the initializer is meant for, or None for any.
    """

    def __init__(self, dtype=None):
        super().__init__(numpy.nan, dtype)


class Identity(Initializer):
    """Fills a square matrix with a scaled identity, ``scale * I``.

    Args:
        scale (float): The value on the diagonal.
        dtype: The dtype the initializer is meant for, or None for any.

    Raises:
        ValueError: (when called) the array is not a square 2-D matrix.
    """

    def __init__(self, scale=1.0, dtype=None):
        super().__init__(dtype)
        self.scale = scale

    def _fill(self, array):
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise ValueError(
                f"Identity initializes square 2-D matrices only, got shape {array.shape}"
            )
        xp = backend.get_array_module(array)
        array[...] = 0
        xp.fill_diagonal(array, self.scale)
