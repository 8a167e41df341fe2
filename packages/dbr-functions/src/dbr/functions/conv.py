"""Array-level helpers of convolutions: output lengths, im2col and col2im.

These work on NumPy or CuPy arrays (not Variables) and record no graph; they
are what Chainer keeps in ``chainer.utils.conv`` (2-D) and
``chainer.utils.conv_nd`` (N-d). ``im2col`` lays every window of an image
``(N, C, H, W)`` out as ``(N, C, kh, kw, out_h, out_w)``; ``col2im`` adds
such windows back into an image; ``im2col_nd`` and ``col2im_nd`` do the same
for ``(N, C, d_1, ..., d_n)``. The differentiable function is
:func:`dbr.functions.im2col`.
"""

import operator

from dbr.functions.connection import _im2col
from dbr.functions.connection._im2col import get_conv_outsize, get_deconv_outsize

__all__ = [
    "as_tuple",
    "col2im",
    "col2im_cpu",
    "col2im_gpu",
    "col2im_nd",
    "col2im_nd_cpu",
    "col2im_nd_gpu",
    "get_conv_outsize",
    "get_deconv_outsize",
    "im2col",
    "im2col_cpu",
    "im2col_gpu",
    "im2col_nd",
    "im2col_nd_cpu",
    "im2col_nd_gpu",
]


def _check_image(who, name, x, ndim):
    if getattr(x, "ndim", None) != ndim:
        raise ValueError(
            f"{who}: expected {name} to be an array of {ndim} axes, "
            f"got {type(x).__name__} of shape {getattr(x, 'shape', None)}"
        )


def _check_device(who, name, x, expected):
    actual = type(x).__module__.partition(".")[0]
    if actual != expected:
        raise TypeError(
            f"{who}: expected {name} to be a {expected} array, got {type(x).__name__} of {actual}"
        )


def im2col(
    img, kh, kw, sy, sx, ph, pw, pval=0, cover_all=False, dy=1, dx=1, out_h=None, out_w=None
):
    """Every ``kh x kw`` window of a batch of images, as one array.

    Args:
        img (array): images of shape ``(N, C, H, W)``, NumPy or CuPy.
        kh, kw (int): the window's height and width.
        sy, sx (int): the strides.
        ph, pw (int): the padding on each side, filled with ``pval``.
        pval: the value read outside the image.
        cover_all (bool): add a window where the last rows or columns would
            otherwise be left out (see :func:`get_conv_outsize`).
        dy, dx (int): the dilation (spacing of the window's elements).
        out_h, out_w (int or None): the number of windows down and across,
            instead of the number the arguments above give.

    Returns:
        array: ``col`` of shape ``(N, C, kh, kw, out_h, out_w)`` and ``img``'s
        dtype, ``col[n, c, i, j, y, x] = padded[n, c, y*sy + i*dy, x*sx + j*dx]``.

    >>> import numpy as np
    >>> im2col(np.arange(16.0).reshape(1, 1, 4, 4), 2, 2, 2, 2, 0, 0)[0, 0, :, :, 0, 0]
    array([[0., 1.],
           [4., 5.]])
    """
    _check_image("im2col", "img", img, 4)
    out_size = None
    if out_h is not None or out_w is not None:
        h, w = img.shape[2:]
        out_size = (
            get_conv_outsize(h, kh, sy, ph, cover_all, dy) if out_h is None else out_h,
            get_conv_outsize(w, kw, sx, pw, cover_all, dx) if out_w is None else out_w,
        )
    return _im2col.im2col_nd(
        img, (kh, kw), (sy, sx), (ph, pw), (dy, dx), cover_all, pval, out_size=out_size
    )


def im2col_cpu(
    img, kh, kw, sy, sx, ph, pw, pval=0, cover_all=False, dy=1, dx=1, out_h=None, out_w=None
):
    """:func:`im2col` of a NumPy array (TypeError for any other)."""
    _check_device("im2col_cpu", "img", img, "numpy")
    return im2col(img, kh, kw, sy, sx, ph, pw, pval, cover_all, dy, dx, out_h, out_w)


def im2col_gpu(img, kh, kw, sy, sx, ph, pw, cover_all=False, dy=1, dx=1, out_h=None, out_w=None):
    """:func:`im2col` of a CuPy array, padding with zeros (Chainer's signature: no ``pval``)."""
    _check_device("im2col_gpu", "img", img, "cupy")
    return im2col(img, kh, kw, sy, sx, ph, pw, 0, cover_all, dy, dx, out_h, out_w)


def col2im(col, sy, sx, ph, pw, h, w, dy=1, dx=1):
    """Add every window of ``col`` back into an image: the transpose of :func:`im2col`.

    Args:
        col (array): windows of shape ``(N, C, kh, kw, out_h, out_w)``, NumPy or CuPy.
        sy, sx (int): the strides.
        ph, pw (int): the padding that :func:`im2col` added; it is cropped.
        h, w (int): the image's height and width.
        dy, dx (int): the dilation.

    Returns:
        array: the image ``(N, C, h, w)`` of ``col``'s dtype, each element the
        sum of the window elements that read it.

    >>> import numpy as np
    >>> col2im(np.ones((1, 1, 2, 2, 1, 2)), 1, 1, 0, 0, 2, 3)[0, 0]
    array([[1., 2., 1.],
           [1., 2., 1.]])
    """
    _check_image("col2im", "col", col, 6)
    return _im2col.col2im_nd(col, (sy, sx), (ph, pw), (h, w), (dy, dx))


def col2im_cpu(col, sy, sx, ph, pw, h, w, dy=1, dx=1):
    """:func:`col2im` of a NumPy array (TypeError for any other)."""
    _check_device("col2im_cpu", "col", col, "numpy")
    return col2im(col, sy, sx, ph, pw, h, w, dy, dx)


def col2im_gpu(col, sy, sx, ph, pw, h, w, dy=1, dx=1):
    """:func:`col2im` of a CuPy array (TypeError for any other)."""
    _check_device("col2im_gpu", "col", col, "cupy")
    return col2im(col, sy, sx, ph, pw, h, w, dy, dx)


def as_tuple(x, n):
    """``x`` as a tuple of ``n`` values: a sequence of length ``n`` as is, anything else repeated.

    >>> as_tuple(2, 3), as_tuple([1, 2], 2)
    ((2, 2, 2), (1, 2))
    """
    n = operator.index(n)
    if hasattr(x, "__getitem__"):
        if len(x) != n:
            raise ValueError(f"as_tuple: expected a sequence of length {n}, got {x!r}")
        return tuple(x)
    return (x,) * n


def im2col_nd(img, ksize, stride, pad, cover_all=False, dilate=1, pval=0):
    """Every window of a batch of N-d images, as one array.

    Args:
        img (array): images of shape ``(N, C, d_1, ..., d_n)``, NumPy or CuPy.
        ksize, stride, pad, dilate (int or tuple of n ints): the window's
            size, its stride, the padding on each side (filled with ``pval``)
            and the spacing of its elements, per spatial axis.
        cover_all (bool): add a window where the last elements would
            otherwise be left out (see :func:`get_conv_outsize`).
        pval: the value read outside the image.

    Returns:
        array: ``col`` of shape ``(N, C, k_1, ..., k_n, out_1, ..., out_n)``.

    >>> import numpy as np
    >>> im2col_nd(np.zeros((2, 3, 4, 5, 6)), (2, 2, 2), 2, 0).shape
    (2, 3, 2, 2, 2, 2, 2, 3)
    """
    if getattr(img, "ndim", 0) < 3:
        raise ValueError(
            f"im2col_nd: expected img to be an array of at least 3 axes, "
            f"got {type(img).__name__} of shape {getattr(img, 'shape', None)}"
        )
    return _im2col.im2col_nd(img, ksize, stride, pad, dilate, cover_all, pval)


def im2col_nd_cpu(img, ksize, stride, pad, pval=0, cover_all=False, dilate=1):
    """:func:`im2col_nd` of a NumPy array (TypeError for any other), in Chainer's order."""
    _check_device("im2col_nd_cpu", "img", img, "numpy")
    return im2col_nd(img, ksize, stride, pad, cover_all, dilate, pval)


def im2col_nd_gpu(img, ksize, stride, pad, cover_all=False, dilate=1):
    """:func:`im2col_nd` of a CuPy array, padding with zeros (TypeError for any other)."""
    _check_device("im2col_nd_gpu", "img", img, "cupy")
    return im2col_nd(img, ksize, stride, pad, cover_all, dilate)


def col2im_nd(col, stride, pad, dims, dilate=1):
    """Add every window of ``col`` back into N-d images: the transpose of :func:`im2col_nd`.

    Args:
        col (array): windows of shape ``(N, C, k_1, ..., k_n, out_1, ..., out_n)``.
        stride, pad, dilate (int or tuple of n ints): as given to :func:`im2col_nd`.
        dims (tuple of n ints): the images' spatial shape.

    Returns:
        array: the images ``(N, C, d_1, ..., d_n)`` of ``col``'s dtype.

    >>> import numpy as np
    >>> col2im_nd(np.ones((1, 1, 2, 3)), 1, 0, (4,))
    array([[[1., 2., 2., 1.]]])
    """
    ndim = getattr(col, "ndim", 0)
    if ndim < 4 or ndim % 2:
        raise ValueError(
            f"col2im_nd: expected col to be an array of an even number (at least 4) of axes, "
            f"got {type(col).__name__} of shape {getattr(col, 'shape', None)}"
        )
    return _im2col.col2im_nd(col, stride, pad, dims, dilate)


def col2im_nd_cpu(col, stride, pad, dims, dilate=1):
    """:func:`col2im_nd` of a NumPy array (TypeError for any other)."""
    _check_device("col2im_nd_cpu", "col", col, "numpy")
    return col2im_nd(col, stride, pad, dims, dilate)


def col2im_nd_gpu(col, stride, pad, dims, dilate=1):
    """:func:`col2im_nd` of a CuPy array (TypeError for any other)."""
    _check_device("col2im_nd_gpu", "col", col, "cupy")
    return col2im_nd(col, stride, pad, dims, dilate)
