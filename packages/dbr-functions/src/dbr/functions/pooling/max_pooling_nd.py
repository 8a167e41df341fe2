"""max_pooling_nd, max_pooling_1d, max_pooling_3d: the maximum over sliding windows."""

import numpy

from dbr.core import FunctionNode
from dbr.core.backend import get_array_module
from dbr.core.configuration import config
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.pooling._pooling import (
    WINDOW_2D_PARAMS,
    Windows,
    WindowScatter,
    max_of_windows,
    spatial_ndim,
    window_2d_geometry,
)

# 2-d max pooling on the GPU in one pass: each output element scans its window
# (the padding reads as -inf), keeping the first maximum in C order; a window
# holding NaN gives NaN and the last position, as max and first_argmax do.
_MAX_POOLING_2D_ELEMENTWISE = {
    "in_params": "raw T x, float64 neg_inf, " + WINDOW_2D_PARAMS,
    "out_params": "T y, I index",
    "operation": """
        typedef dbr_acc<T>::type A;
        const int plane = i / (out_h * out_w);
        const int y0 = i / out_w % out_h * sy - ph;
        const int x0 = i % out_w * sx - pw;
        A best = (A)neg_inf;
        int best_k = 0;
        bool nan_seen = false;
        for (int ky = 0; ky < kh && !nan_seen; ++ky) {
            const int yy = y0 + ky;
            for (int kx = 0; kx < kw; ++kx) {
                const int xx = x0 + kx;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                const A v = (A)x[(plane * h + yy) * w + xx];
                if (isnan(v)) {
                    best = v;
                    nan_seen = true;
                    break;
                }
                if (v > best) {
                    best = v;
                    best_k = ky * kw + kx;
                }
            }
        }
        y = (T)best;
        index = nan_seen ? kh * kw - 1 : best_k;
    """,
    "name": "dbr_max_pooling_2d",
    "preamble": ACC_PREAMBLE,
}


class MaxPoolingND(FunctionNode):
    """The maximum of each window of ``x``; the padding reads as ``-inf``.

    The gradient flows to the first element (in C order within the window)
    equal to the maximum. The positions are kept as ``indexes``: an integer
    array of the output's shape holding flat positions inside the windows
    (uint8 when windows have at most 255 elements, else int32).

    Args:
        ndim (int): the number of spatial axes.
        ksize, stride, pad, cover_all: as :func:`max_pooling_nd` takes them.
        return_indices (bool): always compute ``indexes`` (otherwise only
            when backprop is enabled).
        label (str): the function's name in type-check messages.
        who (str): the function named in errors about the options.
    """

    def __init__(
        self,
        ndim,
        ksize,
        stride=None,
        pad=0,
        cover_all=True,
        return_indices=False,
        label="MaxPoolingND",
        who="max_pooling_nd",
    ):
        self.windows = Windows(ndim, ksize, stride, pad, cover_all, who)
        self.return_indices = return_indices
        self.indexes = None
        self._label = label

    @property
    def label(self):
        """The function's name in messages."""
        return self._label

    def check_type_forward(self, in_types):
        self.windows.check_input(in_types)

    def forward(self, inputs):
        x = inputs[0]
        xp = get_array_module(x)
        windows = self.windows
        self._in_size = x.shape[2:]
        shape = x.shape[:2] + windows.out_size(x.shape[2:])
        y = xp.empty(shape, x.dtype)
        index_dtype = numpy.uint8 if windows.size <= 255 else numpy.int32
        indexes = None
        if self.return_indices or config.enable_backprop:
            indexes = self.indexes = xp.empty(shape, index_dtype)
        if xp is not numpy and windows.ndim == 2:
            if indexes is None:  # the kernel writes them anyway
                indexes = xp.empty(shape, index_dtype)
            geometry = window_2d_geometry(windows, x.shape[2:], shape[2:])
            kernel(_MAX_POOLING_2D_ELEMENTWISE)(
                xp.ascontiguousarray(x), -numpy.inf, *geometry, y, indexes
            )
            return (y,)
        max_of_windows(windows.elements(x, shape[2:], -numpy.inf), y, indexes)
        return (y,)

    def backward(self, indexes, grad_outputs):
        return WindowScatter(self.windows, self.indexes, self._in_size).apply(grad_outputs)


def apply_max_pooling(x, ndim, ksize, stride, pad, cover_all, return_indices, label, who):
    """Apply :class:`MaxPoolingND`; return ``y``, or ``(y, indexes)`` when ``return_indices``."""
    func = MaxPoolingND(ndim, ksize, stride, pad, cover_all, return_indices, label, who)
    y = func.apply((x,))[0]
    if not return_indices:
        return y
    # Chainer's CPU indexes come from numpy's argmax (int64); its CUDA kernel writes int32.
    dtype = numpy.int64 if get_array_module(y.array) is numpy else numpy.int32
    return y, func.indexes.astype(dtype)


def max_pooling_nd(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """N-dimensional spatial max pooling.

    For input ``x`` of shape ``(n, c, d_1, ..., d_N)``, each output element
    is the maximum of one window of ``k_1 x ... x k_N`` elements of a
    channel; windows start every ``s_i`` elements of the input padded with
    ``p_i`` elements of ``-inf`` on both sides. The gradient flows to the
    first maximum of each window.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, ..., d_N)``, ``N >= 1``.
        ksize (int or tuple of ints): window size; ``k`` means ``(k, ..., k)``.
            A tuple gives the number of spatial axes.
        stride (int, tuple of ints or None): window stride; None means ``ksize``.
        pad (int or tuple of ints): padding on both sides of each spatial axis.
        cover_all (bool): add windows at the end until every input element
            is in a window (the output may be larger).
        return_indices (bool): also return the positions of the maxima.

    Returns:
        Variable, or a tuple ``(y, indexes)`` when ``return_indices`` is True:
        ``y`` of shape ``(n, c, o_1, ..., o_N)`` and ``x``'s dtype, with
        ``o_i = (d_i + 2 p_i - k_i) // s_i + 1`` (``+ s_i - 1`` in the
        numerator when ``cover_all``); ``indexes`` an array of ``y``'s shape
        on ``x``'s device (int64 on the CPU, int32 on a GPU, as in Chainer),
        holding the C-order positions of the maxima
        inside their windows.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> max_pooling_nd(x, 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]], dtype=float32)
    """
    ndim = spatial_ndim(x, ksize)
    return apply_max_pooling(
        x, ndim, ksize, stride, pad, cover_all, return_indices, "MaxPoolingND", "max_pooling_nd"
    )


def max_pooling_1d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """1-dimensional spatial max pooling: :func:`max_pooling_nd` on ``(n, c, d)`` inputs.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d)``.
        ksize (int or tuple of one int): window size.
        stride (int, tuple of one int or None): window stride; None means ``ksize``.
        pad (int or tuple of one int): padding (``-inf``) on both sides.
        cover_all (bool): add a window at the end until every input element
            is in a window.
        return_indices (bool): also return the positions of the maxima.

    Returns:
        Variable, or a tuple ``(y, indexes)`` when ``return_indices`` is
        True: as :func:`max_pooling_nd` returns them.

    >>> import numpy as np
    >>> max_pooling_1d(np.array([[[1, 3, 2, 5, 4]]], np.float32), 2).array
    array([[[3., 5., 4.]]], dtype=float32)
    """
    return apply_max_pooling(
        x, 1, ksize, stride, pad, cover_all, return_indices, "MaxPooling1D", "max_pooling_1d"
    )


def max_pooling_3d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """3-dimensional spatial max pooling: :func:`max_pooling_nd` on ``(n, c, d_1, d_2, d_3)``.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, d_2, d_3)``.
        ksize (int or tuple of 3 ints): window size.
        stride (int, tuple of 3 ints or None): window stride; None means ``ksize``.
        pad (int or tuple of 3 ints): padding (``-inf``) on both sides.
        cover_all (bool): add windows at the end until every input element
            is in a window.
        return_indices (bool): also return the positions of the maxima.

    Returns:
        Variable, or a tuple ``(y, indexes)`` when ``return_indices`` is
        True: as :func:`max_pooling_nd` returns them.

    >>> import numpy as np
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)
    >>> max_pooling_3d(x, 2).array
    array([[[[[7.]]]]], dtype=float32)
    """
    return apply_max_pooling(
        x, 3, ksize, stride, pad, cover_all, return_indices, "MaxPooling3D", "max_pooling_3d"
    )
