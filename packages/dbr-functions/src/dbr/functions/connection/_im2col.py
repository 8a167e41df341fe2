"""Sliding-window machinery shared by convolutions, deconvolutions and pooling.

``im2col_nd`` lays every window of an N-d image out as a
``(N, C, k_1, ..., k_d, out_1, ..., out_d)`` array: one strided view of the
(padded) input, copied once. ``col2im_nd`` is its transpose: it adds every
window back into an image, looping over kernel offsets only. Both are
array-level (NumPy or CuPy) and know nothing about Variables. ``Im2Col`` and
``Col2Im`` are the 2-d pair as FunctionNodes (each the other's gradient), for
:func:`~dbr.functions.im2col` and for local_convolution_2d's backward.
"""

import itertools

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.functions import _tuning
from dbr.functions._cpu import blockwise


def _assign(dst, src):
    dst[...] = src


def as_tuple(value, ndim, name, who, minimum=0):
    """``value`` (an int or a sequence of ``ndim`` ints) as a tuple of ``ndim`` ints.

    Raises:
        TypeError: ``value`` is neither an int nor a sequence of ints.
        ValueError: the sequence has the wrong length or an entry is below ``minimum``.
    """
    if isinstance(value, (tuple, list)):
        if len(value) != ndim:
            raise ValueError(
                f"{who}: {name} must be an int or a sequence of {ndim} ints, "
                f"got a sequence of length {len(value)}: {value!r}"
            )
        values = tuple(value)
    else:
        values = (value,) * ndim
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {value!r}")
        if v < minimum:
            raise ValueError(f"{who}: {name} must be >= {minimum}, got {value!r}")
    return tuple(int(v) for v in values)


def get_conv_outsize(size, k, s, p, cover_all=False, d=1):
    """Output length of a convolution along one axis.

    Args:
        size (int): input length.
        k (int): kernel length.
        s (int): stride.
        p (int): padding on each side.
        cover_all (bool): if True, add one more window when the last input
            elements would otherwise not be covered (as pooling often needs).
        d (int): dilation.

    Returns:
        int: ``(size + 2p - dk) // s + 1`` with ``dk = (k - 1) * d + 1``
        (``+ s - 1`` in the numerator when ``cover_all``).

    >>> get_conv_outsize(32, 3, 1, 1)
    32
    """
    dk = (k - 1) * d + 1
    if cover_all:
        return (size + 2 * p - dk + s - 1) // s + 1
    return (size + 2 * p - dk) // s + 1


def get_deconv_outsize(size, k, s, p, cover_all=False, d=1):
    """Output length of a deconvolution (transposed convolution) along one axis.

    The inverse of :func:`get_conv_outsize`: a convolution with the same
    parameters maps this length back to ``size``.

    Args:
        size (int): input length.
        k (int): kernel length.
        s (int): stride.
        p (int): padding on each side.
        cover_all (bool): whether the matching convolution used ``cover_all``.
        d (int): dilation.

    Returns:
        int: ``s * (size - 1) + dk - 2p`` with ``dk = (k - 1) * d + 1``
        (``- s + 1`` when ``cover_all``).

    >>> get_deconv_outsize(16, 4, 2, 1)
    32
    """
    dk = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + dk - s + 1 - 2 * p
    return s * (size - 1) + dk - 2 * p


def _padded(x, pad_before, pad_after, pad_value):
    if not any(pad_before) and not any(pad_after):
        return x
    xp = backend.get_array_module(x)
    nd = len(pad_before)
    shape = x.shape[:2] + tuple(x.shape[2 + i] + pad_before[i] + pad_after[i] for i in range(nd))
    if pad_value == 0:
        xpad = xp.zeros(shape, dtype=x.dtype)
    else:
        xpad = xp.full(shape, pad_value, dtype=x.dtype)
    interior = tuple(slice(pad_before[i], pad_before[i] + x.shape[2 + i]) for i in range(nd))
    xpad[(Ellipsis,) + interior] = x
    return xpad


def padded_size(in_size, ksize, stride, pad, outs, dilate):
    """The spatial shape of an image padded so that ``outs`` windows fit inside it.

    ``pad`` on both sides, and more at the end where ``cover_all`` added a
    window that reaches past the padding.
    """
    return tuple(
        max(in_size[i] + 2 * pad[i], (outs[i] - 1) * stride[i] + (ksize[i] - 1) * dilate[i] + 1)
        for i in range(len(in_size))
    )


def window_slices(ksize, stride, outs, dilate):
    """One index per window element (in C order of the window) into a padded image.

    ``img[index]`` of a padded image ``(N, C, ...)`` is element ``k`` of every
    window, of shape ``(N, C, out_1, ..., out_n)``.
    """
    nd = len(ksize)
    return [
        (Ellipsis,)
        + tuple(
            slice(
                offset[i] * dilate[i],
                offset[i] * dilate[i] + (outs[i] - 1) * stride[i] + 1,
                stride[i],
            )
            for i in range(nd)
        )
        for offset in itertools.product(*[range(k) for k in ksize])
    ]


def window_elements(x, ksize, stride, pad, outs, pad_value):
    """Views of ``x`` padded with ``pad_value``, one per window element.

    Args:
        x: array ``(N, C, d_1, ..., d_n)``.
        ksize, stride, pad (tuples of ints): the windows (no dilation).
        outs (tuple of ints): the number of windows along each axis.
        pad_value: the value read outside ``x``.

    Returns:
        A list of ``k_1 * ... * k_n`` arrays of shape ``(N, C, out_1, ...,
        out_n)``, in C order of the window: the ``k``-th holds element ``k``
        of every window. They are views of ``x``, or of one padded copy.
    """
    in_size = x.shape[2:]
    nd = len(in_size)
    ones = (1,) * nd
    padded = padded_size(in_size, ksize, stride, pad, outs, ones)
    pad_after = tuple(padded[i] - in_size[i] - pad[i] for i in range(nd))
    xpad = _padded(x, pad, pad_after, pad_value)
    return [xpad[index] for index in window_slices(ksize, stride, outs, ones)]


def im2col_nd(
    x, ksize, stride, pad, dilate=1, cover_all=False, pad_value=0, rows_first=False, out_size=None
):
    """Every sliding window of an N-d image, as one array.

    Args:
        x: array of shape ``(N, C, d_1, ..., d_n)``.
        ksize (int or tuple of ints): window size ``k_i``.
        stride (int or tuple of ints): window stride ``s_i``.
        pad (int or tuple of ints): ``p_i`` elements of ``pad_value`` added on
            both sides of each spatial axis (more at the end when
            ``cover_all`` needs them).
        dilate (int or tuple of ints): spacing ``d_i`` between window elements.
        cover_all (bool or tuple of bools): see :func:`get_conv_outsize`;
            a tuple gives one flag per spatial axis.
        pad_value: the value read outside the image (0 for convolution,
            ``-inf`` for max pooling).
        rows_first (bool): put the batch axis after the kernel axes, so that
            ``col`` reshapes to one matrix of ``C * k_1 * ... * k_n`` rows for
            the whole batch.
        out_size (None or tuple of ints): the number of windows along each
            spatial axis, instead of the number that ``cover_all`` gives
            (positions past the padding read ``pad_value``).

    Returns:
        A C-contiguous array ``col`` of ``x``'s dtype and shape
        ``(N, C, k_1, ..., k_n, out_1, ..., out_n)`` with
        ``col[n, c, i_1.., j_1..] = xpad[n, c, j_1 s_1 + i_1 d_1, ...]``, or,
        with ``rows_first``, of shape ``(C, k_1, ..., k_n, N, out_1, ...,
        out_n)`` holding the same values.

    >>> import numpy
    >>> im2col_nd(numpy.zeros((2, 3, 5, 5)), 3, 1, 1).shape
    (2, 3, 3, 3, 5, 5)
    """
    nd = x.ndim - 2
    ksize = as_tuple(ksize, nd, "ksize", "im2col_nd", 1)
    stride = as_tuple(stride, nd, "stride", "im2col_nd", 1)
    pad = as_tuple(pad, nd, "pad", "im2col_nd")
    dilate = as_tuple(dilate, nd, "dilate", "im2col_nd", 1)
    covers = tuple(cover_all) if isinstance(cover_all, (tuple, list)) else (cover_all,) * nd
    if len(covers) != nd:
        raise ValueError(
            f"im2col_nd: cover_all must be a bool or a sequence of {nd} bools, got {cover_all!r}"
        )
    spatial = x.shape[2:]
    if out_size is None:
        outs = tuple(
            get_conv_outsize(spatial[i], ksize[i], stride[i], pad[i], covers[i], dilate[i])
            for i in range(nd)
        )
    else:
        outs = as_tuple(tuple(out_size), nd, "out_size", "im2col_nd")
    if any(o <= 0 for o in outs):
        raise ValueError(
            f"im2col_nd: the window (ksize={ksize}, dilate={dilate}) does not fit the "
            f"input of spatial shape {spatial} padded by {pad}"
        )
    needed = tuple((outs[i] - 1) * stride[i] + (ksize[i] - 1) * dilate[i] + 1 for i in range(nd))
    pad_after = tuple(max(0, needed[i] - spatial[i] - pad[i]) for i in range(nd))
    xpad = _padded(x, pad, pad_after, pad_value)
    xp = backend.get_array_module(x)
    st = xpad.strides
    shape = x.shape[:2] + ksize + outs
    view = xp.lib.stride_tricks.as_strided(
        xpad,
        shape=shape,
        strides=st[:2]
        + tuple(st[2 + i] * dilate[i] for i in range(nd))
        + tuple(st[2 + i] * stride[i] for i in range(nd)),
    )
    if rows_first:
        view = view.transpose(
            (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))
        )
        shape = view.shape
    # Assigning into a C-ordered array iterates in the destination's order (the
    # output axes innermost); ``view.copy()`` may pick the kernel axes instead,
    # several times slower.
    col = xp.empty(shape, dtype=x.dtype)
    if xp is numpy:
        return blockwise(
            _assign, col, view, min_size=_tuning.WINDOW_PARALLEL_SIZE, cache_blocks=False
        )
    col[...] = view
    return col


def col2im_nd(col, stride, pad, in_size, dilate=1, out=None):
    """Add every window of ``col`` back into an image: the transpose of :func:`im2col_nd`.

    Args:
        col: array of shape ``(N, C, k_1, ..., k_n, out_1, ..., out_n)``.
        stride (int or tuple of ints): window stride.
        pad (int or tuple of ints): padding that :func:`im2col_nd` added; it
            is cropped from the result.
        in_size (tuple of ints): the spatial shape ``(d_1, ..., d_n)`` of the image.
        dilate (int or tuple of ints): spacing between window elements.
        out (array or None): where to write the result (saves a copy of it).

    Returns:
        ``out``, or a new array, of ``col``'s dtype and shape
        ``(N, C, d_1, ..., d_n)``, whose element is the sum of every window
        element that read it.

    >>> import numpy
    >>> col2im_nd(numpy.ones((1, 1, 2, 3)), 1, 0, (4,))
    array([[[1., 2., 2., 1.]]])
    """
    nd = (col.ndim - 2) // 2
    stride = as_tuple(stride, nd, "stride", "col2im_nd", 1)
    pad = as_tuple(pad, nd, "pad", "col2im_nd")
    dilate = as_tuple(dilate, nd, "dilate", "col2im_nd", 1)
    in_size = as_tuple(tuple(in_size), nd, "in_size", "col2im_nd")
    ksize = col.shape[2 : 2 + nd]
    outs = col.shape[2 + nd :]
    xp = backend.get_array_module(col)
    padded = padded_size(in_size, ksize, stride, pad, outs, dilate)
    img = xp.zeros(col.shape[:2] + padded, dtype=col.dtype)
    offsets = itertools.product(*[range(k) for k in ksize])
    windows = [
        (window, (slice(None), slice(None)) + offset)
        for window, offset in zip(window_slices(ksize, stride, outs, dilate), offsets)
    ]

    def add_windows(img_part, col_part):
        for window, offset in windows:
            img_part[window] += col_part[offset]

    if xp is numpy:
        blockwise(add_windows, img, col, min_size=_tuning.WINDOW_PARALLEL_SIZE, cache_blocks=False)
    else:
        add_windows(img, col)
    crop = (Ellipsis,) + tuple(slice(pad[i], pad[i] + in_size[i]) for i in range(nd))
    if out is None:
        return xp.ascontiguousarray(img[crop])
    out[...] = img[crop]
    return out


def batch_blocks(xp, n, bytes_per_item):
    """Slices that split a batch of ``n`` into blocks of about 4 MiB of columns each.

    ``bytes_per_item`` is the size of one batch item's columns. The block size
    is :data:`~dbr.functions._tuning.CONV_BATCH_BLOCK_BYTES`; on the GPU (``xp``
    not NumPy) one block holds the whole batch.
    """
    block_bytes = _tuning.CONV_BATCH_BLOCK_BYTES
    size = max(1, block_bytes // max(1, bytes_per_item)) if xp is numpy else n
    return [slice(start, start + size) for start in range(0, n, size)]


class Im2Col(FunctionNode):
    """``(n, c, h, w)`` to ``(n, c*kh*kw, out_h, out_w)``: each window's pixels as channels."""

    def __init__(self, ksize, stride, pad, cover_all, dilate):
        self.ksize = ksize
        self.stride = stride
        self.pad = pad
        self.cover_all = cover_all
        self.dilate = dilate

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim == 4)
        spatial = type_check.eval(x_type.shape)[2:]
        outs = tuple(
            get_conv_outsize(
                spatial[i], self.ksize[i], self.stride[i], self.pad[i], self.cover_all,
                self.dilate[i],
            )
            for i in range(2)
        )  # fmt: skip
        if min(outs) <= 0:
            raise type_check.InvalidType(
                "a window (ksize, dilate) that fits x's padded height and width",
                f"x.shape == {type_check.eval(x_type.shape)}, ksize={self.ksize}, "
                f"pad={self.pad}, dilate={self.dilate}",
            )

    def forward(self, inputs):
        x = inputs[0]
        self._in_size = x.shape[2:]
        col = im2col_nd(x, self.ksize, self.stride, self.pad, self.dilate, self.cover_all)
        n, c, kh, kw, out_h, out_w = col.shape
        return (col.reshape(n, c * kh * kw, out_h, out_w),)

    def backward(self, indexes, grad_outputs):
        params = (self.ksize, self.stride, self.pad, self.cover_all, self.dilate)
        return Col2Im(params, self._in_size).apply(grad_outputs)


class Col2Im(FunctionNode):
    """The gradient of :class:`Im2Col`: every window's channels added back into the image.

    Args:
        params: Im2Col's ``(ksize, stride, pad, cover_all, dilate)``.
        in_size: the image's ``(h, w)``.
    """

    def __init__(self, params, in_size):
        self.params = params
        self.in_size = in_size

    def forward(self, inputs):
        gy = inputs[0]
        (kh, kw), stride, pad, _, dilate = self.params
        n, ckk, out_h, out_w = gy.shape
        col = gy.reshape(n, ckk // (kh * kw), kh, kw, out_h, out_w)
        return (col2im_nd(col, stride, pad, self.in_size, dilate),)

    def backward(self, indexes, grad_outputs):
        return Im2Col(*self.params).apply(grad_outputs)
