"""deconvolution_2d: two-dimensional transposed convolution."""

from dbr.functions.connection.deconvolution_nd import apply_deconvolution


def deconvolution_2d(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1):
    """Two-dimensional deconvolution (transposed convolution).

    The transpose (adjoint) of
    :func:`~dbr.functions.connection.convolution_2d.convolution_2d` with the
    same filter: each input pixel scatters ``x[i, c, u, v] * W[c, o]`` into
    the output window at ``(u s_Y - p_H, v s_X - p_W)``::

        y[i, g * c_O / groups + o, u s_Y + j d_Y - p_H, v s_X + k d_X - p_W]
            += x[i, c, u, v] * W[c, o, j, k]

    for the input channels ``c`` of group ``g``, plus ``b[o]``. Without
    ``outsize`` the output is ``h_O = s_Y (h_I - 1) + (h_K - 1) d_Y + 1 - 2 p_H``
    high (likewise ``w_O``); ``outsize`` may ask for up to ``s_Y - 1`` more
    (any size that :func:`convolution_2d` with these options, possibly with
    ``cover_all``, maps back to ``h_I``).

    Args:
        x (Variable or array): input ``(n, c_I, h_I, w_I)``, float16, float32 or float64.
        W (Variable or array): filter ``(c_I, c_O / groups, h_K, w_K)``, floating.
        b (Variable or array or None): bias ``(c_O,)`` of ``x``'s dtype.
        stride (int or pair of ints): ``(s_Y, s_X)``.
        pad (int or pair of ints): ``(p_H, p_W)``, cropped from the borders.
        outsize (pair of ints or None): ``(h_O, w_O)``.
        dilate (int or pair of ints): ``(d_Y, d_X)``.
        groups (int): number of channel groups.

    Returns:
        Variable: output ``(n, c_O, h_O, w_O)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.random.uniform(0, 1, (10, 3, 25, 20)).astype(np.float32)
    >>> W = np.random.uniform(0, 1, (3, 1, 10, 10)).astype(np.float32)
    >>> deconvolution_2d(x, W, stride=5, pad=5).shape
    (10, 1, 120, 95)
    """
    return apply_deconvolution(
        x, W, b, stride, pad, outsize, dilate, groups, "deconvolution_2d", "Deconvolution2D", 2
    )
