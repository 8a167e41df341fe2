"""deconvolution_nd, deconvolution_1d, deconvolution_3d: N-dimensional transposed convolution.

:class:`DeconvolutionND` is the transpose of
:class:`~dbr.functions.connection.convolution_nd.ConvolutionND` through the
same machinery: one (batched over groups) matrix product, then
:func:`~dbr.functions.connection._im2col.col2im_nd`, per cache-sized block of
the batch. Its backward is a
convolution (for ``x``) and a filter-gradient node (for ``W``).
"""

import itertools
import math

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions import _gpu
from dbr.functions.connection import convolution_nd
from dbr.functions.connection._convolution_common import bias_grad, check_groups, compute_dtype
from dbr.functions.connection._im2col import (
    as_tuple,
    batch_blocks,
    col2im_nd,
    get_conv_outsize,
    get_deconv_outsize,
)


def deconvolve(x, W, b, stride, pad, dilate, groups, outsize):
    """Array-level deconvolution, in the compute dtype of ``x``.

    Args:
        x: array ``(n, c_I, d_1, ..., d_N)``.
        W: array ``(c_I, c_O // groups, k_1, ..., k_N)``.
        b: array ``(c_O,)`` or None.
        stride, pad, dilate (tuples of ints), groups (int): as in
            :func:`deconvolution_nd`.
        outsize (tuple of ints): the output's spatial shape.

    Returns:
        array ``(n, c_O, *outsize)``.
    """
    xp = get_array_module(x)
    dtype = compute_dtype(x.dtype)
    n, in_c = x.shape[:2]
    in_size = x.shape[2:]
    out_c = W.shape[1] * groups
    ksize = tuple(W.shape[2:])
    rows = math.prod(W.shape[1:])
    pixels = math.prod(in_size)
    w = W.astype(dtype, copy=False).reshape(groups, in_c // groups, rows).swapaxes(1, 2)
    xm = x.reshape(n, groups, in_c // groups, pixels)
    if b is not None:
        b = b.astype(dtype, copy=False).reshape((out_c,) + (1,) * len(ksize))
    y = xp.empty((n, out_c) + tuple(outsize), dtype)
    if all(s == 1 for s in stride):
        _deconvolve_unit_stride(x, w, ksize, pad, dilate, groups, y)
        if b is not None:
            y += b
        return y
    for block in batch_blocks(xp, n, groups * rows * pixels * y.itemsize):
        col = xp.matmul(w, xm[block].astype(dtype, copy=False))
        col = col.reshape((col.shape[0], out_c) + ksize + tuple(in_size))
        yb = col2im_nd(col, stride, pad, outsize, dilate, out=y[block])
        if b is not None:
            yb += b
    return y


def _deconvolve_unit_stride(x, w, ksize, pad, dilate, groups, y):
    """Write into ``y`` the deconvolution with stride 1 of ``x`` by the matrices ``w``.

    ``w`` is ``(groups, rows, c_I // groups)`` as :func:`deconvolve` lays the
    filter out. ``x`` is first widened with zeros, on every spatial axis but
    the first, to the padded output's size: in the output's flat padded
    planes, each kernel offset's contribution is then one contiguous run,
    added with a single long slice where :func:`col2im_nd` adds many short
    rows. The zeros cost a slightly larger matrix product. On NumPy the batch
    is the innermost axis (:func:`_deconvolve_batch_inner`).
    """
    xp = get_array_module(x)
    dtype = y.dtype
    n, in_c = x.shape[:2]
    in_size = x.shape[2:]
    out_c = y.shape[1]
    nd = len(in_size)
    padded = tuple(y.shape[2 + i] + 2 * pad[i] for i in range(nd))
    plane_strides = [math.prod(padded[i + 1 :]) for i in range(nd)]
    run = in_size[0] * plane_strides[0]
    plane = math.prod(padded)
    offsets = [
        sum(offset[i] * dilate[i] * plane_strides[i] for i in range(nd))
        for offset in itertools.product(*[range(k) for k in ksize])
    ]
    slack = offsets[-1] + run - plane
    crop = tuple(slice(pad[i], pad[i] + y.shape[2 + i]) for i in range(nd))
    if xp is numpy:
        geometry = (padded, run, plane, offsets, slack, crop)
        _deconvolve_batch_inner(x, w, groups, geometry, y)
        return
    if in_size[1:] == padded[1:]:
        wide = x.astype(dtype, copy=False)
    else:
        wide = xp.zeros((n, in_c, in_size[0]) + padded[1:], dtype)
        wide[(Ellipsis,) + tuple(slice(0, d) for d in in_size[1:])] = x
    wide = wide.reshape(n, groups, in_c // groups, run)
    rows = w.shape[1]
    for block in batch_blocks(xp, n, groups * rows * run * y.itemsize):
        col = xp.matmul(w, wide[block]).reshape(-1, out_c, len(offsets), run)
        img = xp.zeros((col.shape[0], out_c, plane + slack), dtype)
        for k, start in enumerate(offsets):
            img[:, :, start : start + run] += col[:, :, k]
        img = img[:, :, :plane].reshape((col.shape[0], out_c) + padded)
        y[block] = img[(Ellipsis,) + crop]


def _deconvolve_batch_inner(x, w, groups, geometry, y):
    """:func:`_deconvolve_unit_stride` on NumPy, with the batch as the innermost axis.

    A block of ``m`` examples is widened to ``(c_I, run, m)``, multiplied by
    ``w`` in one product per group, and each kernel offset's columns ``(c_O,
    run * m)`` are added to the padded planes ``(c_O, (plane + slack) * m)``
    as one contiguous run per channel. The example-major layout adds ``m *
    c_O`` runs of ``run`` elements per offset instead, and NumPy's cost per
    run outweighs the additions at these sizes.
    """
    padded, run, plane, offsets, slack, crop = geometry
    dtype = y.dtype
    n, in_c = x.shape[:2]
    in_size = x.shape[2:]
    out_c = y.shape[1]
    rows = w.shape[1]
    interior = (Ellipsis,) + tuple(slice(0, d) for d in in_size[1:]) + (slice(None),)
    # Blocks of half the usual columns: the additions read them again.
    for block in batch_blocks(numpy, n, 2 * groups * rows * run * y.itemsize):
        xb = x[block]
        m = xb.shape[0]
        wide = numpy.zeros((in_c, in_size[0]) + padded[1:] + (m,), dtype)
        wide[interior] = numpy.moveaxis(xb, 0, -1)
        col = numpy.matmul(w, wide.reshape(groups, in_c // groups, run * m))
        col = col.reshape(out_c, len(offsets), run * m)
        img = numpy.zeros((out_c, (plane + slack) * m), dtype)
        for k, start in enumerate(offsets):
            img[:, start * m : (start + run) * m] += col[:, k]
        img = img[:, : plane * m].reshape((out_c,) + padded + (m,))
        y[block] = numpy.moveaxis(img, -1, 0)[(Ellipsis,) + crop]


class DeconvolutionND(FunctionNode):
    """N-dimensional (grouped, dilated) deconvolution of ``x`` by ``W`` plus an optional bias.

    Args:
        stride, pad, dilate (tuples of ints), groups (int): the normalized
            options, one entry per spatial axis.
        outsize (tuple of ints or None): the output's spatial shape; None
            for the smallest one (:func:`get_deconv_outsize`).
        label (str): the name its error messages give.
    """

    def __init__(self, stride, pad, dilate, groups, outsize=None, label="DeconvolutionND"):
        self.stride = stride
        self.pad = pad
        self.dilate = dilate
        self.groups = groups
        self.outsize = None if outsize is None else tuple(outsize)
        self._label = label

    @property
    def label(self):
        """The function's name in messages."""
        return self._label

    def _outsize(self, in_size, ksize):
        if self.outsize is not None:
            return self.outsize
        return tuple(
            get_deconv_outsize(in_size[i], ksize[i], self.stride[i], self.pad[i], d=self.dilate[i])
            for i in range(len(in_size))
        )

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
            x_type.shape[1] == w_type.shape[0],
            w_type.shape[0] % self.groups == 0,
        )
        if len(in_types) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[1] * self.groups,
            )
        x_shape = type_check.eval(x_type.shape)
        w_shape = type_check.eval(w_type.shape)
        in_size = x_shape[2:]
        ksize = w_shape[2:]
        outsize = self._outsize(in_size, ksize)
        options = f"stride={self.stride}, pad={self.pad}, dilate={self.dilate}"
        if self.outsize is None:
            if any(o <= 0 for o in outsize):
                raise type_check.InvalidType(
                    "a positive output size on every spatial axis",
                    f"output size {outsize} from x.shape == {x_shape}, "
                    f"W.shape == {w_shape}, {options}",
                )
            return
        for i in range(nd):
            args = (outsize[i], ksize[i], self.stride[i], self.pad[i])
            low = get_conv_outsize(*args, False, self.dilate[i])
            high = get_conv_outsize(*args, True, self.dilate[i])
            if not low <= in_size[i] <= high:
                raise type_check.InvalidType(
                    f"{low} <= x.shape[{2 + i}] <= {high} (the sizes a convolution maps "
                    f"outsize[{i}] == {outsize[i]} to)",
                    f"x.shape == {x_shape}, W.shape == {w_shape}, {options}",
                )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        outsize = self._outsize(x.shape[2:], W.shape[2:])
        b = inputs[2] if len(inputs) == 3 else None
        if self._cudnn_applies(x, W, outsize):
            y_shape = (x.shape[0], W.shape[1] * self.groups) + tuple(outsize)
            options = (self.stride, self.pad, self.dilate, self.groups)
            y = _gpu.cudnn("convolution_backward_data", W, x, y_shape, *options)
            if y is not None:
                if b is not None:
                    y += b.reshape((1, -1) + (1,) * len(outsize))
                return (y,)
        y = deconvolve(x, W, b, self.stride, self.pad, self.dilate, self.groups, outsize)
        return (y.astype(x.dtype, copy=False),)

    def _cudnn_applies(self, x, W, outsize):
        if not convolution_nd.cudnn_applies((False,), x, W):
            return False
        # cuDNN's data gradient gives only the outsize a convolution without cover_all maps to x.
        ksize = W.shape[2:]
        return all(
            get_conv_outsize(outsize[i], ksize[i], self.stride[i], self.pad[i], False, d)
            == x.shape[2 + i]
            for i, d in enumerate(self.dilate)
        )

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        in_size = x.shape[2:]
        ksize = W.shape[2:]
        out_size = gy.shape[2:]
        cover_all = tuple(
            get_conv_outsize(out_size[i], ksize[i], self.stride[i], self.pad[i], False, d)
            != in_size[i]
            for i, d in enumerate(self.dilate)
        )
        options = (self.stride, self.pad, self.dilate, self.groups, cover_all)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(convolution_nd.ConvolutionND(*options).apply((gy, W))[0])
            elif i == 1:
                grad_w = convolution_nd.ConvolutionNDGradW(*options, ksize, W.dtype)
                ret.append(grad_w.apply((gy, x))[0])
            else:
                ret.append(bias_grad(gy))
        return tuple(ret)


def apply_deconvolution(x, W, b, stride, pad, outsize, dilate, groups, who, label, nd=None):
    """Normalize the options (raising ``who``'s errors) and apply :class:`DeconvolutionND`."""
    nd = convolution_nd.spatial_ndim(x, nd)
    node = DeconvolutionND(
        as_tuple(stride, nd, "stride", who, 1),
        as_tuple(pad, nd, "pad", who),
        as_tuple(dilate, nd, "dilate", who, 1),
        check_groups(groups, who),
        None if outsize is None else as_tuple(outsize, nd, "outsize", who, 1),
        label,
    )
    inputs = (x, W) if b is None else (x, W, b)
    return node.apply(inputs)[0]


def deconvolution_nd(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """N-dimensional deconvolution (transposed convolution).

    The transpose (adjoint) of :func:`~dbr.functions.connection.convolution_nd.convolution_nd`
    with the same filter: every input element scatters ``x[i, c] * W[c, o]``
    into its window of the output::

        y[i, g * c_O / groups + o, l_1 s_1 + j_1 dil_1 - p_1, ...]
            += x[i, c, l_1, ..., l_N] * W[c, o, j_1, ..., j_N]

    for the input channels ``c`` of group ``g``, plus ``b``. Without
    ``outsize`` the output size is ``s_n (d_n - 1) + (k_n - 1) dil_n + 1 - 2 p_n``;
    ``outsize`` may ask for up to ``s_n - 1`` more (any size that a
    convolution with these options maps back to ``d_n``).

    Args:
        x (Variable or array): input ``(n, c_I, d_1, ..., d_N)``, float16,
            float32 or float64.
        W (Variable or array): filter ``(c_I, c_O / groups, k_1, ..., k_N)``, floating.
        b (Variable or array or None): bias ``(c_O,)`` of ``x``'s dtype.
        stride (int or tuple of ints): stride ``s``.
        pad (int or tuple of ints): padding ``p`` cropped from both sides.
        outsize (int or tuple of ints or None): the output's spatial shape.
        dilate (int or tuple of ints): dilation ``dil``.
        groups (int): number of channel groups.

    Returns:
        Variable: output ``(n, c_O, l_1, ..., l_N)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.ones((1, 3, 2, 2, 2), np.float32)
    >>> deconvolution_nd(x, np.ones((3, 4, 3, 3, 3), np.float32), stride=2).shape
    (1, 4, 5, 5, 5)
    """
    return apply_deconvolution(
        x, W, b, stride, pad, outsize, dilate, groups, "deconvolution_nd", "DeconvolutionND"
    )


def deconvolution_1d(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """1-dimensional deconvolution: :func:`deconvolution_nd` with one spatial axis.

    Args:
        x (Variable or array): input ``(n, c_I, d)``, floating.
        W (Variable or array): filter ``(c_I, c_O / groups, k)``.
        b (Variable or array or None): bias ``(c_O,)``.
        stride, pad, outsize, dilate, groups: see :func:`deconvolution_nd`.

    Returns:
        Variable: output ``(n, c_O, l)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> deconvolution_1d(np.ones((1, 1, 2), np.float32), np.ones((1, 1, 3), np.float32)).array
    array([[[1., 2., 2., 1.]]], dtype=float32)
    """
    convolution_nd.check_spatial_ndim(x, 1, "deconvolution_1d")
    return apply_deconvolution(
        x, W, b, stride, pad, outsize, dilate, groups, "deconvolution_1d", "Deconvolution1D", 1
    )


def deconvolution_3d(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """3-dimensional deconvolution: :func:`deconvolution_nd` with three spatial axes.

    Args:
        x (Variable or array): input ``(n, c_I, d_1, d_2, d_3)``, floating.
        W (Variable or array): filter ``(c_I, c_O / groups, k_1, k_2, k_3)``.
        b (Variable or array or None): bias ``(c_O,)``.
        stride, pad, outsize, dilate, groups: see :func:`deconvolution_nd`.

    Returns:
        Variable: output ``(n, c_O, l_1, l_2, l_3)`` of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.ones((1, 2, 2, 2, 2), np.float32)
    >>> W = np.ones((2, 1, 2, 2, 2), np.float32)
    >>> deconvolution_3d(x, W, stride=2, outsize=(5, 4, 4)).shape
    (1, 1, 5, 4, 4)
    """
    convolution_nd.check_spatial_ndim(x, 3, "deconvolution_3d")
    return apply_deconvolution(
        x, W, b, stride, pad, outsize, dilate, groups, "deconvolution_3d", "Deconvolution3D", 3
    )
