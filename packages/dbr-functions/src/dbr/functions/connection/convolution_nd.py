"""convolution_nd, convolution_1d, convolution_3d: N-dimensional convolution.

:class:`ConvolutionND` is the one convolution node of dbr.functions: the 2-d,
dilated and grouped convolutions apply it, and the depthwise one shares its
array-level code. Its forward is one
:func:`~dbr.functions.connection._im2col.im2col_nd` and one (batched over
groups) matrix product per cache-sized block of the batch; its backward is a
deconvolution (for ``x``) and a :class:`ConvolutionNDGradW` node (for ``W``),
each differentiable again. On NumPy, the filter gradient of an ungrouped
convolution whose per-example products exceed
:data:`~dbr.functions._tuning.FILTER_GRAD_ONE_PRODUCT_MIN` multiply-adds is
one matrix product per block of the batch, of the output gradient by the
block's windows laid out row-first, which OpenBLAS spreads over its threads;
smaller ones stay per example, where OpenBLAS's small-matrix kernels are
faster. (The forward as one product was slower at one thread.)
"""

import math

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions import _gpu, _tuning
from dbr.functions.connection import deconvolution_nd
from dbr.functions.connection._convolution_common import bias_grad, check_groups, compute_dtype
from dbr.functions.connection._im2col import (
    as_tuple,
    batch_blocks,
    get_conv_outsize,
    im2col_nd,
)


def conv_outsize(in_size, ksize, stride, pad, dilate, cover_all):
    """The output's spatial shape of a convolution (one entry per spatial axis)."""
    return tuple(
        get_conv_outsize(in_size[i], ksize[i], stride[i], pad[i], cover_all[i], dilate[i])
        for i in range(len(in_size))
    )


def convolve(x, W, b, stride, pad, dilate, groups, cover_all):
    """Array-level convolution, in :func:`compute_dtype` of ``x``.

    Args:
        x: array ``(n, C, d_1, ..., d_N)``.
        W: array ``(O, C // groups, k_1, ..., k_N)``.
        b: array ``(O,)`` or None.
        stride, pad, dilate (tuples of ints), groups (int), cover_all (tuple
        of bools): as in :func:`convolution_nd`, one entry per spatial axis.

    Returns:
        array ``(n, O, l_1, ..., l_N)``.
    """
    xp = get_array_module(x)
    dtype = compute_dtype(x.dtype)
    ksize = W.shape[2:]
    outs = conv_outsize(x.shape[2:], ksize, stride, pad, dilate, cover_all)
    n = x.shape[0]
    out_c = W.shape[0]
    rows = math.prod(W.shape[1:])
    pixels = math.prod(outs)
    w = W.astype(dtype, copy=False).reshape(groups, out_c // groups, rows)
    if b is not None:
        b = b.astype(dtype, copy=False).reshape(groups, out_c // groups, 1)
    y = xp.empty((n, groups, out_c // groups, pixels), dtype)
    for block in batch_blocks(xp, n, groups * rows * pixels * y.itemsize):
        xb = x[block].astype(dtype, copy=False)
        col = im2col_nd(xb, ksize, stride, pad, dilate, cover_all)
        yb = y[block]
        xp.matmul(w, col.reshape(xb.shape[0], groups, rows, pixels), out=yb)
        if b is not None:
            yb += b
    return y.reshape((n, out_c) + outs)


def convolve_grad_w(x, gy, ksize, stride, pad, dilate, groups, cover_all):
    """Array-level gradient of a convolution with respect to its filter.

    Args:
        x: the convolution's input ``(n, C, d_1, ..., d_N)``.
        gy: the gradient of its output ``(n, O, l_1, ..., l_N)``.
        ksize (tuple of ints): the filter's spatial shape.
        stride, pad, dilate, groups, cover_all: as in :func:`convolve`.

    Returns:
        array ``(O, C // groups, k_1, ..., k_N)`` in :func:`compute_dtype` of ``x``.
    """
    xp = get_array_module(x)
    dtype = compute_dtype(x.dtype)
    n, in_c = x.shape[:2]
    out_c = gy.shape[1]
    rows = in_c // groups * math.prod(ksize)
    pixels = math.prod(gy.shape[2:])
    g = gy.reshape(n, groups, out_c // groups, pixels)
    gw = xp.zeros((groups, out_c // groups, rows), dtype)
    if _one_product(xp, groups, out_c, rows, pixels):
        for block in batch_blocks(xp, n, rows * pixels * gw.itemsize):
            xb = x[block].astype(dtype, copy=False)
            col = im2col_nd(xb, ksize, stride, pad, dilate, cover_all, rows_first=True)
            gt = g[block, 0].astype(dtype, copy=False).transpose(1, 0, 2).reshape(out_c, -1)
            gw[0] += gt @ col.reshape(rows, -1).T
        return gw.reshape((out_c, in_c // groups) + tuple(ksize))
    for block in batch_blocks(xp, n, groups * rows * pixels * gw.itemsize):
        xb = x[block].astype(dtype, copy=False)
        col = im2col_nd(xb, ksize, stride, pad, dilate, cover_all)
        col = col.reshape(xb.shape[0], groups, rows, pixels)
        gw += xp.matmul(g[block].astype(dtype, copy=False), col.swapaxes(2, 3)).sum(axis=0)
    return gw.reshape((out_c, in_c // groups) + tuple(ksize))


def _one_product(xp, groups, out_c, rows, pixels):
    products = out_c * rows * pixels
    return xp is numpy and groups == 1 and products > _tuning.FILTER_GRAD_ONE_PRODUCT_MIN


def cudnn_applies(cover_all, *arrays):
    """Whether cuDNN computes this convolution: CuPy arrays of one dtype, no ``cover_all``.

    cuDNN has no ``cover_all`` (the extra output rows it asks for), nor mixed
    dtypes; those, and ``config.use_cudnn == 'never'``, take im2col + matmul.
    """
    x = arrays[0]
    if type(x) is numpy.ndarray or any(cover_all):
        return False
    if any(a.dtype != x.dtype for a in arrays[1:]):
        return False
    return _gpu.use_cudnn(x.dtype)


class ConvolutionND(FunctionNode):
    """N-dimensional (grouped, dilated) convolution of ``x`` by ``W`` plus an optional bias.

    Args:
        stride, pad, dilate (tuples of ints), groups (int), cover_all (tuple
            of bools): the normalized options, one entry per spatial axis.
        label (str): the name its error messages give.
    """

    def __init__(self, stride, pad, dilate, groups, cover_all, label="ConvolutionND"):
        self.stride = stride
        self.pad = pad
        self.dilate = dilate
        self.groups = groups
        self.cover_all = cover_all
        self._label = label

    @property
    def label(self):
        """The function's name in messages."""
        return self._label

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W", "b"))
        type_check.expect(in_types.size() >= 2, in_types.size() <= 3)
        x_type, w_type = in_types[:2]
        nd = len(self.stride)
        type_check.expect(
            x_type.dtype.kind == "f",
            w_type.dtype.kind == "f",
            x_type.ndim == nd + 2,
            w_type.ndim == nd + 2,
            x_type.shape[1] == w_type.shape[1] * self.groups,
            w_type.shape[0] % self.groups == 0,
        )
        if len(in_types) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[0],
            )
        x_shape = type_check.eval(x_type.shape)
        w_shape = type_check.eval(w_type.shape)
        outs = tuple(
            get_conv_outsize(
                x_shape[2 + i],
                w_shape[2 + i],
                self.stride[i],
                self.pad[i],
                self.cover_all[i],
                self.dilate[i],
            )
            for i in range(nd)
        )
        if any(o <= 0 for o in outs):
            raise type_check.InvalidType(
                "a positive output size on every spatial axis",
                f"output size {outs} from x.shape == {x_shape}, W.shape == {w_shape}, "
                f"stride={self.stride}, pad={self.pad}, dilate={self.dilate}",
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        if cudnn_applies(self.cover_all, x, W):
            options = (self.stride, self.pad, self.dilate, self.groups)
            y = _gpu.cudnn("convolution_forward", x, W, b, *options)
            if y is not None:
                return (y,)
        y = convolve(x, W, b, self.stride, self.pad, self.dilate, self.groups, self.cover_all)
        return (y.astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(_grad_x(self, x, gy, W))
            elif i == 1:
                grad_w = ConvolutionNDGradW(
                    self.stride,
                    self.pad,
                    self.dilate,
                    self.groups,
                    self.cover_all,
                    W.shape[2:],
                    W.dtype,
                )
                ret.append(grad_w.apply((x, gy))[0])
            else:
                ret.append(bias_grad(gy))
        return tuple(ret)


def _grad_x(node, x, gy, W):
    """The gradient with respect to ``x`` of ``node``'s convolution of ``x`` by ``W``."""
    options = (node.stride, node.pad, node.dilate, node.groups)
    return deconvolution_nd.DeconvolutionND(*options, x.shape[2:]).apply((gy, W))[0]


class ConvolutionNDGradW(FunctionNode):
    """The gradient of a convolution with respect to its filter, from ``(x, gy)``.

    Args:
        stride, pad, dilate, groups, cover_all: the convolution's options, as
            in :class:`ConvolutionND`.
        ksize (tuple of ints): the filter's spatial shape.
        w_dtype: the filter's dtype, which the gradient takes.
    """

    _new_outputs = True

    def __init__(self, stride, pad, dilate, groups, cover_all, ksize, w_dtype):
        self.stride = stride
        self.pad = pad
        self.dilate = dilate
        self.groups = groups
        self.cover_all = cover_all
        self.ksize = tuple(ksize)
        self.w_dtype = w_dtype

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gy = inputs
        if cudnn_applies(self.cover_all, x, gy) and x.dtype == self.w_dtype:
            w_shape = (gy.shape[1], x.shape[1] // self.groups) + self.ksize
            options = (self.stride, self.pad, self.dilate, self.groups)
            gw = _gpu.cudnn("convolution_backward_filter", x, gy, w_shape, *options)
            if gw is not None:
                return (gw,)
        gw = convolve_grad_w(
            x, gy, self.ksize, self.stride, self.pad, self.dilate, self.groups, self.cover_all
        )
        return (gw.astype(self.w_dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggw = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(_grad_x(self, x, gy, ggw))
            else:
                ret.append(
                    ConvolutionND(
                        self.stride, self.pad, self.dilate, self.groups, self.cover_all
                    ).apply((x, ggw))[0]
                )
        return tuple(ret)


def spatial_ndim(x, expected):
    """The number of spatial axes of ``x`` to normalize options for.

    ``expected`` (1, 2 or 3) for the fixed-dimension functions; for the N-d
    ones ``x.ndim - 2``, or 1 when ``x`` has too few axes (its type check
    then reports them).
    """
    if expected is not None:
        return expected
    return max(x.ndim - 2, 1)


def check_spatial_ndim(x, nd, who):
    """Raise a ValueError naming ``who`` unless ``x`` has ``nd`` spatial axes.

    The check of the 1-d and 3-d wrappers of the N-d functions, whose wrong
    inputs are ValueErrors in Chainer (the N-d and 2-d functions' are
    InvalidTypes from their type checks).
    """
    if x.ndim != nd + 2:
        raise ValueError(
            f"{who}: expected x with {nd} spatial axes (x.ndim == {nd + 2}), "
            f"got x.shape == {x.shape}"
        )


def convolution_node(nd, stride, pad, cover_all, dilate, groups, who, label):
    """A :class:`ConvolutionND` on ``nd`` spatial axes from user options (``who``'s errors)."""
    return ConvolutionND(
        as_tuple(stride, nd, "stride", who, 1),
        as_tuple(pad, nd, "pad", who),
        as_tuple(dilate, nd, "dilate", who, 1),
        check_groups(groups, who),
        (bool(cover_all),) * nd,
        label,
    )


def apply_convolution(
    x, W, b, stride, pad, cover_all, dilate, groups, who, label, expected_ndim=None
):
    """Normalize the options (raising ``who``'s errors) and apply :class:`ConvolutionND`."""
    nd = spatial_ndim(x, expected_ndim)
    node = convolution_node(nd, stride, pad, cover_all, dilate, groups, who, label)
    inputs = (x, W) if b is None else (x, W, b)
    return node.apply(inputs)[0]


def convolution_nd(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """N-dimensional convolution (cross-correlation), as in CNNs.

    With ``N`` spatial axes, input ``x`` of shape ``(n, c_I, d_1, ..., d_N)``
    and filter ``W`` of shape ``(c_O, c_I / groups, k_1, ..., k_N)``::

        y[i, o, l_1, ..., l_N] = b[o] + sum_{c, j_1..j_N}
            W[o, c, j_1, ..., j_N] * xpad[i, g * c_I / groups + c,
                                         l_1 s_1 + j_1 d_1, ..., l_N s_N + j_N d_N]

    where ``g = o // (c_O / groups)`` is the output channel's group and
    ``xpad`` is ``x`` with ``p_n`` zeros on both sides of axis ``n``. The
    output size is ``l_n = (d_n + 2 p_n - (k_n - 1) dil_n - 1) // s_n + 1``;
    with ``cover_all`` windows are added (``+ s_n - 1`` in the numerator) so
    that every input element is covered.

    Args:
        x (Variable or array): input ``(n, c_I, d_1, ..., d_N)``, float16, float32
            or float64.
        W (Variable or array): filter ``(c_O, c_I / groups, k_1, ..., k_N)``, floating.
        b (Variable or array or None): bias ``(c_O,)`` of ``x``'s dtype.
        stride (int or tuple of ints): stride ``s`` of the filter application.
        pad (int or tuple of ints): zero padding ``p`` on both sides.
        cover_all (bool): add windows so that every input element is covered.
        dilate (int or tuple of ints): dilation ``dil``: spacing of filter taps.
        groups (int): split input and output channels into this many groups,
            each convolved with its own slice of filters.

    Returns:
        Variable: output ``(n, c_O, l_1, ..., l_N)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.random.uniform(0, 1, (2, 3, 4, 5, 6)).astype(np.float32)
    >>> W = np.random.uniform(0, 1, (2, 3, 1, 2, 3)).astype(np.float32)
    >>> convolution_nd(x, W, pad=1).shape
    (2, 2, 6, 6, 6)
    """
    return apply_convolution(
        x, W, b, stride, pad, cover_all, dilate, groups, "convolution_nd", "ConvolutionND"
    )


def convolution_1d(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """1-dimensional convolution: :func:`convolution_nd` with one spatial axis.

    Args:
        x (Variable or array): input ``(n, c_I, d)``, floating.
        W (Variable or array): filter ``(c_O, c_I / groups, k)``.
        b (Variable or array or None): bias ``(c_O,)``.
        stride, pad, cover_all, dilate, groups: see :func:`convolution_nd`.

    Returns:
        Variable: output ``(n, c_O, l)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> convolution_1d(np.ones((1, 2, 5), np.float32), np.ones((1, 2, 3), np.float32)).array
    array([[[6., 6., 6.]]], dtype=float32)
    """
    check_spatial_ndim(x, 1, "convolution_1d")
    return apply_convolution(
        x, W, b, stride, pad, cover_all, dilate, groups, "convolution_1d", "Convolution1D", 1
    )


def convolution_3d(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """3-dimensional convolution: :func:`convolution_nd` with three spatial axes.

    Args:
        x (Variable or array): input ``(n, c_I, d_1, d_2, d_3)``, floating.
        W (Variable or array): filter ``(c_O, c_I / groups, k_1, k_2, k_3)``.
        b (Variable or array or None): bias ``(c_O,)``.
        stride, pad, cover_all, dilate, groups: see :func:`convolution_nd`.

    Returns:
        Variable: output ``(n, c_O, l_1, l_2, l_3)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.ones((1, 1, 3, 3, 3), np.float32)
    >>> convolution_3d(x, np.ones((4, 1, 2, 2, 2), np.float32), stride=2, pad=1).shape
    (1, 4, 2, 2, 2)
    """
    check_spatial_ndim(x, 3, "convolution_3d")
    return apply_convolution(
        x, W, b, stride, pad, cover_all, dilate, groups, "convolution_3d", "Convolution3D", 3
    )
