"""The base class of array initializers."""

import numpy


class Initializer:
    """Fills an array in place with initial values.

    An initializer is called on an existing array (``initializer(array)``)
    and overwrites every element of it. Subclasses implement :meth:`_fill`;
    :meth:`__call__` checks the array's dtype against :attr:`dtype` first.
    A subclass may instead override ``__call__`` itself, as Chainer's
    initializers do.

    Args:
        dtype: The dtype the initializer is meant for, or None for any
            dtype. When given, calling it on an array of another dtype is an
            error, and :func:`~dbr.core.initializers.generate_array`
            allocates arrays of this dtype.

    Attributes:
        dtype (numpy.dtype or None): The dtype given at construction,
            normalised with :class:`numpy.dtype`.
    """

    def __init__(self, dtype=None):
        self.dtype = None if dtype is None else numpy.dtype(dtype)

    def __call__(self, array):
        """Overwrite ``array`` (a NumPy or CuPy array) with initial values.

        Args:
            array: The array to fill; it is modified in place.

        Raises:
            ValueError: ``array.dtype`` differs from :attr:`dtype`.
        """
        if self.dtype is not None and array.dtype != self.dtype:
            raise ValueError(
                f"{type(self).__name__} was built for dtype {self.dtype}, "
                f"but the array to initialize has dtype {array.dtype}"
            )
        self._fill(array)

    def _fill(self, array):
        """Write the initial values into ``array``; the dtype is already checked."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _fill")

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v is not None)
        return f"{type(self).__name__}({fields})"
