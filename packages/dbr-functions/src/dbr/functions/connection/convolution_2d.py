"""convolution_2d: two-dimensional convolution, as in CNNs."""

from dbr.functions.connection.convolution_nd import apply_convolution, convolution_node


def convolution_2d(x, W, b=None, stride=1, pad=0, cover_all=False, *, dilate=1, groups=1):
    """Two-dimensional convolution (cross-correlation) of images by filters.

    With input ``x`` of shape ``(n, c_I, h_I, w_I)`` and filter ``W`` of shape
    ``(c_O, c_I / groups, h_K, w_K)``::

        y[i, o, u, v] = b[o] + sum_{c, j, k} W[o, c, j, k]
                        * xpad[i, g * c_I / groups + c, u s_Y + j d_Y, v s_X + k d_X]

    where ``g = o // (c_O / groups)`` and ``xpad`` is ``x`` with ``p_H``
    (``p_W``) zeros above and below (left and right). The output size is
    ``h_O = (h_I + 2 p_H - (h_K - 1) d_Y - 1) // s_Y + 1`` (likewise ``w_O``);
    ``cover_all`` adds a window where the last input rows or columns would
    otherwise be left out (``+ s_Y - 1`` in the numerator).

    The computation is one im2col and one matrix product (per block of the
    batch); see :func:`~dbr.functions.connection.convolution_nd.convolution_nd`.

    Args:
        x (Variable or array): input ``(n, c_I, h_I, w_I)``, float16, float32 or float64.
        W (Variable or array): filter ``(c_O, c_I / groups, h_K, w_K)``, floating.
        b (Variable or array or None): bias ``(c_O,)`` of ``x``'s dtype.
        stride (int or pair of ints): ``(s_Y, s_X)``; an int is used for both.
        pad (int or pair of ints): ``(p_H, p_W)``.
        cover_all (bool): add windows so that every input element is covered.
        dilate (int or pair of ints): ``(d_Y, d_X)``: spacing of filter taps.
        groups (int): split the channels into this many groups, each convolved
            with its own ``c_O / groups`` filters.

    Returns:
        Variable: output ``(n, c_O, h_O, w_O)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.random.uniform(0, 1, (10, 3, 30, 40)).astype(np.float32)
    >>> W = np.random.uniform(0, 1, (1, 3, 5, 5)).astype(np.float32)
    >>> convolution_2d(x, W, stride=(3, 5), pad=2).shape
    (10, 1, 10, 8)
    """
    return apply_convolution(
        x, W, b, stride, pad, cover_all, dilate, groups, "convolution_2d", "Convolution2D", 2
    )


def Convolution2DFunction(stride=1, pad=0, cover_all=False, *, dilate=1, groups=1):  # noqa: N802
    """The node :func:`convolution_2d` applies, under Chainer's name: a ConvolutionND on 2 axes.

    Chainer code builds it directly (``Convolution2DFunction(stride, pad).apply((x, W))``);
    the options are :func:`convolution_2d`'s.

    Returns:
        ConvolutionND: the node, not yet applied.
    """
    return convolution_node(
        2, stride, pad, cover_all, dilate, groups, "convolution_2d", "Convolution2D"
    )
