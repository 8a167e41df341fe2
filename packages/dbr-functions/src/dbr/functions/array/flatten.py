"""flatten: an array as one dimension."""

from dbr.core import as_variable, ops


def flatten(x):
    """Flatten an array to one dimension, in C order.

    Args:
        x (Variable or array): input of any shape.

    Returns:
        Variable: of shape ``(x.size,)``; its gradient is reshaped back.

    >>> import numpy as np
    >>> flatten(np.arange(6, dtype=np.float32).reshape(2, 3)).array
    array([0., 1., 2., 3., 4., 5.], dtype=float32)
    """
    x = as_variable(x)
    return ops.reshape(x, (x.size,))
