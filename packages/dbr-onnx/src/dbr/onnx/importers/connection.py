"""Importers of Gemm, MatMul, Conv and ConvTranspose."""

import math

import dbr.functions as F
from dbr.core import ops
from dbr.onnx.importers._util import importer

IMPORTERS = {}


@importer(IMPORTERS, "Gemm")
def _gemm(params, a, b, c=None):
    alpha, beta = params.get("alpha", 1.0), params.get("beta", 1.0)
    trans_a, trans_b = params.get("transA", 0), params.get("transB", 0)
    bias_like = c is None or (beta == 1.0 and c.ndim == 1 and c.shape[0] == b.shape[0])
    if trans_b and not trans_a and alpha == 1.0 and bias_like:
        return F.linear(a, b, c)  # what L.Linear computes, gradients included
    y = F.matmul(a, b, transa=bool(trans_a), transb=bool(trans_b))
    if alpha != 1.0:
        y = y * alpha
    if c is None:
        return y
    return ops.add(y, c if beta == 1.0 else c * beta)


@importer(IMPORTERS, "MatMul")
def _matmul(params, a, b):
    if a.ndim == 1 or b.ndim == 1:
        # NumPy's vector rules: a vector is a row on the left, a column on the right.
        a2 = F.reshape(a, (1, -1)) if a.ndim == 1 else a
        b2 = F.reshape(b, (-1, 1)) if b.ndim == 1 else b
        y = F.matmul(a2, b2)
        shape = y.shape[:-2] + y.shape[-2:][a.ndim == 1 : 2 - (b.ndim == 1)]
        return F.reshape(y, shape)
    return F.matmul(a, b)


def spatial_pads(params, spatial, kernel, strides, dilations):
    """ONNX's begin and end pads of each spatial axis (``auto_pad`` resolved)."""
    auto_pad = params.get("auto_pad", "NOTSET")
    n = len(spatial)
    if auto_pad in ("NOTSET", "VALID"):
        pads = params.get("pads") if auto_pad == "NOTSET" else None
        pads = pads or [0] * (2 * n)
        return list(pads[:n]), list(pads[n:])
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins, ends


def pad_spatial(x, begins, ends, value=0.0):
    """``x`` padded by ``begins``/``ends`` on its spatial axes (those after the first two)."""
    widths = [(0, 0), (0, 0), *zip(begins, ends)]
    return F.pad(x, widths, "constant", constant_values=value)


def _windows(params, kernel):
    """``(n, strides, dilations)`` of a convolution with ``kernel``, ONNX's defaults filled."""
    n = len(kernel)
    return n, params.get("strides") or [1] * n, params.get("dilations") or [1] * n


@importer(IMPORTERS, "Conv")
def _conv(params, x, w, b=None):
    kernel = w.shape[2:]
    n, strides, dilations = _windows(params, kernel)
    begins, ends = spatial_pads(params, x.shape[2:], kernel, strides, dilations)
    if begins != ends:
        x = pad_spatial(x, begins, ends)
        begins = [0] * n
    return F.convolution_nd(
        x, w, b, stride=tuple(strides), pad=tuple(begins), dilate=tuple(dilations),
        groups=params.get("group", 1),
    )  # fmt: skip


@importer(IMPORTERS, "ConvTranspose")
def _conv_transpose(params, x, w, b=None):
    kernel = w.shape[2:]
    n, strides, dilations = _windows(params, kernel)
    extra = params.get("output_padding") or [0] * n
    spatial = x.shape[2:]
    full = [
        s * (i - 1) + (k - 1) * d + 1 for i, k, s, d in zip(spatial, kernel, strides, dilations)
    ]
    output_shape = params.get("output_shape")
    auto_pad = params.get("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = (
            list(output_shape[-n:]) if output_shape else [i * s for i, s in zip(spatial, strides)]
        )
        totals = [f + e - o for f, e, o in zip(full, extra, out)]
        small = [t // 2 for t in totals]
        large = [t - t // 2 for t in totals]
        begins, ends = (small, large) if auto_pad != "SAME_LOWER" else (large, small)
    else:
        pads = (params.get("pads") if auto_pad == "NOTSET" else None) or [0] * (2 * n)
        begins, ends = list(pads[:n]), list(pads[n:])
    groups = params.get("group", 1)
    if begins == ends:
        outsize = tuple(f + e - 2 * p for f, e, p in zip(full, extra, begins))
        return F.deconvolution_nd(
            x, w, b, stride=tuple(strides), pad=tuple(begins), outsize=outsize,
            dilate=tuple(dilations), groups=groups,
        )  # fmt: skip
    y = F.deconvolution_nd(
        x, w, b, stride=tuple(strides), outsize=tuple(f + e for f, e in zip(full, extra)),
        dilate=tuple(dilations), groups=groups,
    )  # fmt: skip
    crop = [slice(bg, size - en) for bg, en, size in zip(begins, ends, y.shape[2:])]
    return F.get_item(y, (slice(None), slice(None), *crop))


@importer(IMPORTERS, "Einsum")
def _einsum(params, *operands):
    return F.einsum(params.get("equation").replace(" ", ""), *operands)
