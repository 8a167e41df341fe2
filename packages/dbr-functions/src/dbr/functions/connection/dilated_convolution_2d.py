"""dilated_convolution_2d: two-dimensional convolution with dilated filters."""

from dbr.functions.connection.convolution_nd import apply_convolution


def dilated_convolution_2d(x, W, b=None, stride=1, pad=0, dilate=1, cover_all=False):
    """Two-dimensional dilated (atrous) convolution.

    :func:`~dbr.functions.connection.convolution_2d.convolution_2d` whose
    filter taps are ``dilate`` elements apart: a ``(h_K, w_K)`` filter covers
    ``((h_K - 1) d_Y + 1, (w_K - 1) d_X + 1)`` input elements::

        y[i, o, u, v] = b[o] + sum_{c, j, k} W[o, c, j, k]
                        * xpad[i, c, u s_Y + j d_Y, v s_X + k d_X]

    Args:
        x (Variable or array): input ``(n, c_I, h_I, w_I)``, floating.
        W (Variable or array): filter ``(c_O, c_I, h_K, w_K)``, floating.
        b (Variable or array or None): bias ``(c_O,)`` of ``x``'s dtype.
        stride (int or pair of ints): ``(s_Y, s_X)``.
        pad (int or pair of ints): zero padding ``(p_H, p_W)``.
        dilate (int or pair of ints): ``(d_Y, d_X)``.
        cover_all (bool): add windows so that every input element is covered.

    Returns:
        Variable: output ``(n, c_O, h_O, w_O)`` with
        ``h_O = (h_I + 2 p_H - (h_K - 1) d_Y - 1) // s_Y + 1`` (likewise ``w_O``).

    >>> import numpy as np
    >>> x = np.ones((1, 1, 7, 7), np.float32)
    >>> dilated_convolution_2d(x, np.ones((1, 1, 3, 3), np.float32), dilate=2).array.shape
    (1, 1, 3, 3)
    """
    return apply_convolution(
        x,
        W,
        b,
        stride,
        pad,
        cover_all,
        dilate,
        1,
        "dilated_convolution_2d",
        "DilatedConvolution2D",
        2,
    )
