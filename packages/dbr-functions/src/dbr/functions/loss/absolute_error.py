"""absolute_error: the elementwise absolute difference ``|x0 - x1|``."""

from dbr.core import backend
from dbr.functions.loss._difference import DifferenceLoss


class AbsoluteError(DifferenceLoss):
    """Elementwise ``|x0 - x1|``; the gradient where ``x0 == x1`` is 0."""

    @staticmethod
    def loss(diff, x0):
        """``|diff|``, in place."""
        return backend.get_array_module(diff).abs(diff, out=diff)

    @staticmethod
    def grad_x0(x0, x1, gy):
        """``gy * sign(x0 - x1)``."""
        return gy * x0.xp.sign(x0.array - x1.array)


def absolute_error(x0, x1):
    """Elementwise absolute error ``|x0 - x1|``.

    The gradient where ``x0 == x1`` is taken to be 0.

    Args:
        x0 (Variable or array): float16, float32 or float64 array.
        x1 (Variable or array): an array of the same shape and dtype as ``x0``.

    Returns:
        Variable: ``|x0 - x1|``, of ``x0``'s shape and dtype.

    >>> import numpy as np
    >>> x0 = np.array([1.0, 2.0, 3.0], np.float32)
    >>> x1 = np.array([2.0, 2.0, 0.5], np.float32)
    >>> absolute_error(x0, x1).array
    array([1. , 0. , 2.5], dtype=float32)
    """
    return AbsoluteError().apply((x0, x1))[0]
