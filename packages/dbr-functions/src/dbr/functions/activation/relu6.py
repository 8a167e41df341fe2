"""relu6: the rectified linear unit capped at 6."""

from dbr.functions.activation.clipped_relu import ClippedReLU


def relu6(x):
    """Rectified linear unit capped at 6, :math:`y_i = \\min(\\max(x_i, 0), 6)`.

    The same as ``clipped_relu(x, 6.0)``: the gradient is 1 where
    ``0 < x < 6`` and 0 elsewhere.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype, with values in ``[0, 6]``.

    >>> import numpy as np
    >>> relu6(np.array([-1.0, 0.5, 7.0], np.float32)).array
    array([0. , 0.5, 6. ], dtype=float32)
    """
    return ClippedReLU(6.0).apply((x,))[0]
