"""average_pooling_2d: the mean over sliding 2-d windows."""

from dbr.functions.pooling.average_pooling_nd import apply_average_pooling


def average_pooling_2d(x, ksize, stride=None, pad=0):
    """Spatial average pooling over 2-d windows.

    For input ``x`` of shape ``(n, c, h, w)``, each output element is the
    mean of a ``k_h x k_w`` window of one channel; windows start every
    ``s_h`` rows and ``s_w`` columns of the input padded with ``p_h`` rows
    and ``p_w`` columns of zeros on both sides. The zeros count in the mean
    (use :func:`average_pooling_nd` with ``pad_value=None`` to leave them
    out), and windows never run past the padded input (there is no
    ``cover_all`` mode).

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, h, w)``.
        ksize (int or pair of ints): window size; ``k`` means ``(k, k)``.
        stride (int, pair of ints or None): window stride; None means ``ksize``.
        pad (int or pair of ints): zero padding on both sides of each spatial axis.

    Returns:
        Variable: of shape ``(n, c, (h + 2 p_h - k_h) // s_h + 1,
        (w + 2 p_w - k_w) // s_w + 1)`` and ``x``'s dtype (float16 sums are
        accumulated in float32).

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> average_pooling_2d(x, 2).array
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]], dtype=float32)
    """
    return apply_average_pooling(
        x, 2, ksize, stride, pad, 0, "AveragePooling2D", "average_pooling_2d"
    )
