"""im2col: every sliding window of a batch of images, laid out as channels."""

from dbr.functions.connection._im2col import Im2Col, as_tuple


def im2col(x, ksize, stride=1, pad=0, cover_all=False, dilate=1):
    """Extract every sliding window of ``x`` as channels: the input of a convolution's matmul.

    ``y[n, (c*kh + i)*kw + j, p, q] = x_pad[n, c, p*sy + i*dy, q*sx + j*dx]``,
    where ``x_pad`` is ``x`` with ``ph``/``pw`` zeros on each side (more at
    the end when ``cover_all`` needs them). A convolution is then
    ``W.reshape(c_O, -1)`` times ``y`` over the channel axis. The gradient adds
    every window back into the image (col2im).

    Args:
        x (Variable or array): images of shape ``(n, c, h, w)``, floating.
        ksize (int or pair of ints): window size ``(kh, kw)``; an int ``k``
            means ``(k, k)``.
        stride (int or pair of ints): window stride ``(sy, sx)``.
        pad (int or pair of ints): zero padding ``(ph, pw)`` on each side.
        cover_all (bool): if True, add windows so that every input pixel is
            covered (the output may be one larger on each axis).
        dilate (int or pair of ints): spacing ``(dy, dx)`` between the
            pixels of a window.

    Returns:
        Variable: of shape ``(n, c*kh*kw, out_h, out_w)`` and ``x``'s dtype,
        with ``out_h = (h + 2ph - (kh - 1)*dy - 1) // sy + 1`` (and likewise
        ``out_w``; ``cover_all`` adds ``sy - 1`` to the numerator).

    >>> import numpy as np
    >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    >>> im2col(x, 2)[0, :, 0, 0].array
    array([0., 1., 3., 4.], dtype=float32)
    """
    ksize = as_tuple(ksize, 2, "ksize", "im2col", 1)
    stride = as_tuple(stride, 2, "stride", "im2col", 1)
    pad = as_tuple(pad, 2, "pad", "im2col")
    dilate = as_tuple(dilate, 2, "dilate", "im2col", 1)
    return Im2Col(ksize, stride, pad, bool(cover_all), dilate).apply((x,))[0]
