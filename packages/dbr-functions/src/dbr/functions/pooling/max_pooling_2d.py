"""max_pooling_2d: the maximum over sliding 2-d windows."""

from dbr.functions.pooling.max_pooling_nd import apply_max_pooling


def max_pooling_2d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """Spatial max pooling over 2-d windows.

    For input ``x`` of shape ``(n, c, h, w)``, each output element is the
    maximum of a ``k_h x k_w`` window of one channel; windows start every
    ``s_h`` rows and ``s_w`` columns of the input padded with ``p_h`` rows
    and ``p_w`` columns of ``-inf`` on both sides. The gradient flows to the
    first maximum (in row-major order) of each window.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, h, w)``.
        ksize (int or pair of ints): window size; ``k`` means ``(k, k)``.
        stride (int, pair of ints or None): window stride; None means ``ksize``.
        pad (int or pair of ints): padding on both sides of each spatial axis.
        cover_all (bool): add windows at the end until every input element
            is in a window (the output may be larger).
        return_indices (bool): also return the positions of the maxima, for
            :func:`upsampling_2d`.

    Returns:
        Variable, or a tuple ``(y, indexes)`` when ``return_indices`` is True:
        ``y`` of shape ``(n, c, h_o, w_o)`` and ``x``'s dtype, with
        ``h_o = (h + 2 p_h - k_h) // s_h + 1`` (``+ s_h - 1`` in the
        numerator when ``cover_all``, likewise ``w_o``); ``indexes`` an array
        of ``y``'s shape on ``x``'s device (int64 on the CPU, int32 on a GPU,
        as in Chainer), holding the position
        ``i * k_w + j`` of each maximum inside its window.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> max_pooling_2d(x, 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]], dtype=float32)
    >>> max_pooling_2d(x, 3, stride=2, pad=1).shape
    (1, 1, 3, 3)
    """
    return apply_max_pooling(
        x, 2, ksize, stride, pad, cover_all, return_indices, "MaxPooling2D", "max_pooling_2d"
    )
