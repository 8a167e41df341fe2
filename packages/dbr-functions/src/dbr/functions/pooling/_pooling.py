"""Sliding windows shared by the pooling functions.

Every pooling function reads its windows through
:mod:`dbr.functions.connection._im2col`: ``im2col_nd`` lays them out as
columns of shape ``(N, C, K, out_1, ..., out_d)`` (``K`` the number of
elements of a window) and ``col2im_nd`` adds columns back into an image. On
top of it sit four linear FunctionNodes in two adjoint pairs, each the
other's backward, so that every pooling function can be differentiated any
number of times:

- :class:`WindowSum`, ``y[o] = coeff[o] * (sum of x over window o)``, and
  :class:`WindowSpread`, its transpose, which adds ``coeff[o] * y[o]`` to
  every element of window ``o`` (average pooling, unpooling);
- :class:`WindowGather`, ``y[o] = x[element index[o] of window o]``, and
  :class:`WindowScatter`, its transpose (max pooling's gradients,
  upsampling). They touch one element per window, so instead of columns
  they use the input position of that element (:meth:`Windows.targets`,
  read off ``im2col_nd`` of a numbered plane): a ``take`` and a
  ``bincount``, one pass each. On the CPU, windows that share no element
  scatter without positions: element ``k`` of every window is a strided view
  of the (padded) image, which takes ``y`` where the index is ``k``.

Max pooling reads its windows the same way, as ``K`` strided views
(:meth:`Windows.elements`), without copying them into columns. On the CPU the
columns of a batch are built in blocks that stay in the cache.
"""

import math

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.connection import _im2col
from dbr.functions.connection._im2col import (
    as_tuple,
    col2im_nd,
    get_conv_outsize,
    get_deconv_outsize,
    im2col_nd,
    padded_size,
    window_elements,
    window_slices,
)

_float16 = numpy.dtype(numpy.float16)

# The 2-d geometry every 2-d window kernel takes after its arrays: the input's and
# the output's spatial shape, then ksize, stride and pad.
WINDOW_2D_PARAMS = (
    "int32 h, int32 w, int32 out_h, int32 out_w, int32 kh, int32 kw, "
    "int32 sy, int32 sx, int32 ph, int32 pw"
)
# WindowScatter on the GPU for 2-d windows: each input element gathers the
# gradients of the windows that picked it, in a fixed order (deterministic, no
# atomics, any overlap).
_WINDOW_SCATTER_2D_ELEMENTWISE = {
    "in_params": "raw T gy, raw I index, " + WINDOW_2D_PARAMS,
    "out_params": "T gx",
    "operation": """
        typedef dbr_acc<T>::type A;
        const int plane = i / (h * w);
        const int py = i / w % h + ph;
        const int px = i % w + pw;
        const int oy0 = py < kh ? 0 : (py - kh) / sy + 1;
        const int ox0 = px < kw ? 0 : (px - kw) / sx + 1;
        const int oy1 = min(py / sy, out_h - 1);
        const int ox1 = min(px / sx, out_w - 1);
        A sum = 0;
        for (int oy = oy0; oy <= oy1; ++oy) {
            const int row = (plane * out_h + oy) * out_w;
            const int ky = py - oy * sy;
            for (int ox = ox0; ox <= ox1; ++ox) {
                if ((int)index[row + ox] == ky * kw + (px - ox * sx)) {
                    sum += (A)gy[row + ox];
                }
            }
        }
        gx = (T)sum;
    """,
    "name": "dbr_window_scatter_2d",
    "preamble": ACC_PREAMBLE,
}


def window_2d_geometry(windows, in_size, out_size):
    """The arguments after the arrays of a 2-d window kernel (see ``WINDOW_2D_PARAMS``)."""
    return (*in_size, *out_size, *windows.ksize, *windows.stride, *windows.pad)


def batch_blocks(x, bytes_per_item):
    """Slices splitting the batch axis of ``x`` into blocks (one block on the GPU)."""
    return _im2col.batch_blocks(get_array_module(x), x.shape[0], bytes_per_item)


def spatial_ndim(x, ksize):
    """The number of spatial axes an N-d pooling of ``x`` with ``ksize`` works on.

    The length of ``ksize`` when it is a sequence, else ``x.ndim - 2`` (at
    least 1, so that the type check reports an input with too few axes).
    """
    if isinstance(ksize, (tuple, list)):
        return len(ksize)
    return max(x.ndim - 2, 1)


class Windows:
    """The geometry of pooling windows over ``ndim`` spatial axes.

    Args:
        ndim (int): the number of spatial axes.
        ksize (int or tuple of ints): window size (>= 1).
        stride (int, tuple of ints or None): window stride (>= 1); None means
            ``ksize``.
        pad (int or tuple of ints): padding on both sides of each axis (>= 0).
        cover_all (bool): whether windows are added at the end until every
            input element is covered (see ``get_conv_outsize``).
        who (str): the function named in error messages.

    Attributes:
        ksize, stride, pad (tuples of ints), cover_all (bool): the options.
        size (int): the number of elements of a window.
        disjoint (bool): whether no element is in two windows (``stride >=
            ksize`` on every axis).

    Raises:
        TypeError, ValueError: an option is not an int (or a sequence of
        ``ndim`` ints) in its range.
    """

    __slots__ = ("ksize", "stride", "pad", "cover_all", "size", "disjoint")

    def __init__(self, ndim, ksize, stride, pad, cover_all, who):
        self.ksize = as_tuple(ksize, ndim, "ksize", who, 1)
        self.stride = self.ksize if stride is None else as_tuple(stride, ndim, "stride", who, 1)
        self.pad = as_tuple(pad, ndim, "pad", who)
        self.cover_all = bool(cover_all)
        self.size = math.prod(self.ksize)
        self.disjoint = all(s >= k for s, k in zip(self.stride, self.ksize))

    @property
    def ndim(self):
        """The number of spatial axes."""
        return len(self.ksize)

    def out_size(self, in_size):
        """The number of windows along each axis of an input of spatial shape ``in_size``."""
        return tuple(
            [
                get_conv_outsize(
                    in_size[i], self.ksize[i], self.stride[i], self.pad[i], self.cover_all
                )
                for i in range(self.ndim)
            ]
        )

    def in_size(self, out_size):
        """The smallest spatial shape whose windows number ``out_size`` (unpooling's output)."""
        return tuple(
            [
                get_deconv_outsize(
                    out_size[i], self.ksize[i], self.stride[i], self.pad[i], self.cover_all
                )
                for i in range(self.ndim)
            ]
        )

    def check_input(self, in_types, name="x"):
        """Type-check the pooled input: a floating array of ``ndim + 2`` axes with windows.

        Raises:
            dbr.core.type_check.InvalidType: naming the function and ``name``.
        """
        type_check.argname(in_types, (name,))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim == self.ndim + 2)
        shape = type_check.eval(x_type.shape)
        outs = self.out_size(shape[2:])
        if any(o <= 0 for o in outs):
            raise type_check.InvalidType(
                "at least one window along every spatial axis",
                f"{outs} windows for {name}.shape == {shape} with ksize={self.ksize}, "
                f"stride={self.stride}, pad={self.pad}, cover_all={self.cover_all}",
            )

    def check_spread_input(self, x_type, out_size):
        """Type-check the spatial shape of ``x`` spread back onto images of ``out_size``.

        With ``out_size`` given, pooling an image of that size must give ``x``'s
        spatial shape; with None, the smallest image that does must have no
        negative size (a size of 0 gives an empty output, as in Chainer).

        Raises:
            dbr.core.type_check.InvalidType: naming the function and the sizes.
        """
        shape = type_check.eval(x_type.shape)
        if out_size is not None:
            outs = self.out_size(out_size)
            for i in range(self.ndim):
                type_check.expect(x_type.shape[2 + i] == outs[i])
        elif any(o < 0 for o in self.in_size(shape[2:])):
            raise type_check.InvalidType(
                "a non-negative output size on every spatial axis",
                f"output size {self.in_size(shape[2:])} from x.shape == {shape} with "
                f"ksize={self.ksize}, stride={self.stride}, pad={self.pad}, "
                f"cover_all={self.cover_all}",
            )

    def columns(self, x, pad_value=0):
        """The windows of ``x`` as a ``(N, C, K, out_1, ..., out_d)`` array (a copy)."""
        col = im2col_nd(x, self.ksize, self.stride, self.pad, 1, self.cover_all, pad_value)
        return col.reshape(col.shape[:2] + (self.size,) + col.shape[2 + self.ndim :])

    def elements(self, x, out_size, pad_value):
        """Element ``k`` of every window of ``x``, for each ``k``: a list of views.

        See :func:`~dbr.functions.connection._im2col.window_elements`; each
        view has shape ``(N, C, out_1, ..., out_d)``.
        """
        return window_elements(x, self.ksize, self.stride, self.pad, out_size, pad_value)

    def image(self, col, in_size):
        """The sum of the windows ``col`` (as :meth:`columns` lays them out) as an image."""
        col = col.reshape(col.shape[:2] + self.ksize + col.shape[3:])
        return col2im_nd(col, self.stride, self.pad, in_size)

    def targets(self, indexes, in_size):
        """Where window elements ``indexes`` lie, as positions in planes with a leading element.

        Args:
            indexes: integer array ``(N, C, out_1, ..., out_d)`` of positions
                inside the windows (see :class:`WindowGather`).
            in_size (tuple of ints): the spatial shape of the windowed planes.

        Returns:
            An int64 array of ``indexes``' shape: for element ``o`` of plane
            ``p = n * C + c``, ``p * (prod(in_size) + 1) + 1 + j`` where ``j``
            is the C-order position in the plane of element ``indexes[n, c, o]``
            of window ``o``, or ``p * (prod(in_size) + 1)`` when that element is
            padding.
        """
        xp = get_array_module(indexes)
        plane_size = math.prod(in_size)
        # The windows of a plane that numbers its elements 1, 2, ... (the padding 0)
        # tell each window element's position.
        numbers = xp.arange(1, plane_size + 1, dtype=numpy.int64).reshape((1, 1) + tuple(in_size))
        out = math.prod(indexes.shape[2:])
        positions = self.columns(numbers).reshape(self.size, out)
        planes = indexes.shape[0] * indexes.shape[1]
        t = positions[indexes.reshape(planes, out), xp.arange(out)]
        t += xp.arange(0, planes * (plane_size + 1), plane_size + 1, dtype=numpy.int64)[:, None]
        return t.reshape(indexes.shape)


class WindowSum(FunctionNode):
    """``y[n, c, o] = coeff[o] * (sum of x[n, c] over window o)``, zero padding counted.

    Args:
        windows (Windows): the window geometry.
        coeff: a scalar, or an array of the output's spatial shape in the
            dtype of the sums (float32 for float16 inputs).
    """

    def __init__(self, windows, coeff=1):
        self.windows = windows
        self.coeff = coeff

    def coefficients(self, in_size, xp, dtype):
        """The ``coeff`` for an input of spatial shape ``in_size``; ``dtype`` is the sums'."""
        return self.coeff

    def forward(self, inputs):
        x = inputs[0]
        xp = get_array_module(x)
        windows = self.windows
        self._in_size = in_size = x.shape[2:]
        out_size = windows.out_size(in_size)
        half = x.dtype == _float16
        acc_dtype = numpy.float32 if half else x.dtype
        coeff = self.coeff = self.coefficients(in_size, xp, acc_dtype)
        y = xp.empty(x.shape[:2] + out_size, x.dtype)
        per_item = x.itemsize * windows.size * math.prod(x.shape[1:2] + out_size)
        for block in batch_blocks(x, per_item):
            col = windows.columns(x[block])
            if not half:
                y_block = y[block]
                col.sum(axis=2, out=y_block)
                if not _is_one(coeff):
                    y_block *= coeff
            else:
                s = col.sum(axis=2, dtype=acc_dtype)
                if not _is_one(coeff):
                    s *= coeff
                y[block] = s
        return (y,)

    def backward(self, indexes, grad_outputs):
        return WindowSpread(self.windows, self._in_size, self.coeff).apply(grad_outputs)


class WindowSpread(FunctionNode):
    """The transpose of :class:`WindowSum`: adds ``coeff[o] * y[n, c, o]`` over window ``o``.

    Args:
        windows (Windows): the window geometry.
        in_size (tuple of ints): the spatial shape of the result.
        coeff: a scalar or an array of ``y``'s spatial shape.
    """

    def __init__(self, windows, in_size, coeff=1):
        self.windows = windows
        self.in_size = in_size
        self.coeff = coeff

    def forward(self, inputs):
        y = inputs[0]
        xp = get_array_module(y)
        windows = self.windows
        coeff = self.coeff
        if not _is_one(coeff):
            y = (y * coeff).astype(y.dtype, copy=False)

        in_size = self.in_size
        blocks = batch_blocks(y, y.itemsize * windows.size * math.prod(y.shape[1:]))
        if len(blocks) == 1:
            return (windows.image(_repeated(xp, y, windows.size), in_size),)
        x = xp.empty(y.shape[:2] + tuple(in_size), y.dtype)
        for block in blocks:
            x[block] = windows.image(_repeated(xp, y[block], windows.size), in_size)
        return (x,)

    def backward(self, indexes, grad_outputs):
        return WindowSum(self.windows, self.coeff).apply(grad_outputs)


class SpreadToOutsize:
    """Mixin of the spreading functions: without ``outsize``, the smallest image pooling to x."""

    def forward(self, inputs):
        if self.outsize is None:
            self.in_size = self.windows.in_size(inputs[0].shape[2:])
        return super().forward(inputs)


class WindowGather(FunctionNode):
    """``y[n, c, o] = x[n, c, element indexes[n, c, o] of window o]`` (zero in the padding).

    Args:
        windows (Windows): the window geometry.
        indexes: integer array of the output's shape; each entry is a flat
            (C-order) position inside its window, in ``[0, windows.size)``.
    """

    def __init__(self, windows, indexes):
        self.windows = windows
        self.indexes = indexes

    def forward(self, inputs):
        x = inputs[0]
        xp = get_array_module(x)
        self._in_size = in_size = x.shape[2:]
        planes = x.shape[0] * x.shape[1]
        # Each plane gets a leading zero, which the padding's targets (0) read.
        extended = xp.zeros((planes, math.prod(in_size) + 1), x.dtype)
        extended[:, 1:] = x.reshape(planes, extended.shape[1] - 1)
        targets = self.windows.targets(self.indexes, in_size)
        return (extended.ravel().take(targets),)

    def backward(self, indexes, grad_outputs):
        return WindowScatter(self.windows, self.indexes, self._in_size).apply(grad_outputs)


class WindowScatter(FunctionNode):
    """The transpose of :class:`WindowGather`: adds ``y[n, c, o]`` at its window element.

    Args:
        windows (Windows): the window geometry.
        indexes: integer array of ``y``'s shape (see :class:`WindowGather`).
        in_size (tuple of ints): the spatial shape of the result.
    """

    def __init__(self, windows, indexes, in_size):
        self.windows = windows
        self.indexes = indexes
        self.in_size = in_size

    def forward(self, inputs):
        y = inputs[0]
        xp = get_array_module(y)
        in_size = self.in_size
        if xp is not numpy and len(in_size) == 2:
            gx = xp.empty(y.shape[:2] + tuple(in_size), y.dtype)
            geometry = window_2d_geometry(self.windows, in_size, y.shape[2:])
            kernel(_WINDOW_SCATTER_2D_ELEMENTWISE)(
                xp.ascontiguousarray(y), xp.ascontiguousarray(self.indexes), *geometry, gx
            )
            return (gx,)
        if xp is numpy and self.windows.disjoint and numpy.isfinite(y.sum()):
            return (self._scatter_disjoint(y, in_size),)
        planes = y.shape[0] * y.shape[1]
        plane_size = math.prod(in_size) + 1
        targets = self.windows.targets(self.indexes, in_size).ravel()
        # What lands on a plane's leading element came from the padding and is dropped.
        if self.windows.disjoint:
            # No element is in two windows: an assignment is the sum.
            flat = xp.zeros(planes * plane_size, y.dtype)
            flat[targets] = y.ravel()
        else:
            flat = xp.bincount(targets, y.ravel(), planes * plane_size)
        gx = flat.reshape(planes, plane_size)[:, 1:].astype(y.dtype)
        return (gx.reshape(y.shape[:2] + tuple(in_size)),)

    def _scatter_disjoint(self, y, in_size):
        # Windows that share no element: each window element's view of the
        # (padded) result takes y where the window picked that element. y * mask
        # is exact for finite y (the caller checks), and adding 0 turns the -0.0
        # of negative y * 0 into 0.0, which the other elements hold.
        windows = self.windows
        out_size = y.shape[2:]
        ones = (1,) * windows.ndim
        padded = padded_size(in_size, windows.ksize, windows.stride, windows.pad, out_size, ones)
        gx = numpy.zeros(y.shape[:2] + padded, y.dtype)
        picked = numpy.empty(y.shape, bool)
        masked = numpy.empty(y.shape, y.dtype)
        zero = y.dtype.type(0)
        for k, index in enumerate(window_slices(windows.ksize, windows.stride, out_size, ones)):
            numpy.equal(self.indexes, k, out=picked)
            numpy.multiply(y, picked, out=masked)
            numpy.add(masked, zero, out=gx[index])
        if padded == tuple(in_size):
            return gx
        crop = (Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(windows.pad, in_size))
        return numpy.ascontiguousarray(gx[crop])

    def backward(self, indexes, grad_outputs):
        return WindowGather(self.windows, self.indexes).apply(grad_outputs)


def max_of_windows(parts, y, indexes=None):
    """The maximum of each window into ``y``, and where it first occurs into ``indexes``.

    ``parts`` are the windows' elements (:meth:`Windows.elements`); a window
    holding NaN gives NaN, as ``max`` does. ``indexes``, when given, is an
    integer array of ``y``'s shape (see :func:`first_argmax`).
    """
    xp = get_array_module(y)
    if len(parts) == 1:
        y[...] = parts[0]
    else:
        xp.maximum(parts[0], parts[1], out=y)
        for part in parts[2:]:
            xp.maximum(y, part, out=y)
    if indexes is not None:
        first_argmax(parts, y, indexes)


def first_argmax(parts, y, out):
    """Write to ``out`` the position of the first element of each window equal to ``y``.

    ``parts`` holds the ``K`` elements of every window in order, each an
    array of ``y``'s shape, and ``y`` their maximum. ``out`` is an integer
    array of ``y``'s shape. Counting, for each position, the windows whose
    maximum is still ahead takes ``K - 1`` cheap passes where an argmax
    along a window axis is slow. A window holding NaN gets ``K - 1``.
    """
    xp = get_array_module(y)
    out.fill(0)
    size = len(parts)
    if size == 1:
        return
    ahead = parts[0] != y
    seen = xp.empty_like(ahead)
    for k in range(1, size):
        out += ahead
        if k < size - 1:
            xp.not_equal(parts[k], y, out=seen)
            ahead &= seen


def _repeated(xp, y, size):
    """``y`` of shape ``(N, C, ...)`` viewed as columns ``(N, C, size, ...)`` of equal windows."""
    return xp.broadcast_to(y[:, :, None], y.shape[:2] + (size,) + y.shape[2:])


def _is_one(coeff):
    return isinstance(coeff, (int, float)) and coeff == 1
