"""Converters of linear, bilinear, convolution (plain, local), deconvolution and embed_id."""

import numpy

from dbr.onnx.converters._util import Chain


def _linear(p):
    c = Chain(p)
    x, w = p.input_names[:2]
    x_shape = p.input_arrays[0].shape
    n_batch_axes = p.func.n_batch_axes
    if n_batch_axes == 1:
        flat = c.op("Flatten", [x], axis=1) if len(x_shape) != 2 else x
        c.op("Gemm", [flat, w, *p.input_names[2:]], p.output_names, transB=1)
        return c.nodes
    in_size = p.input_arrays[1].shape[1]
    flat = c.op("Reshape", [x, c.const([-1, in_size])])
    y = c.op("Gemm", [flat, w, *p.input_names[2:]], transB=1)
    c.op("Reshape", [y, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _pads(p, in_spatial, out_spatial, kernel, stride, pad, dilate):
    """Begin pads as given; end pads grown so that the output has dbr's size (cover_all)."""
    ends = []
    for n, o, k, s, b, d in zip(in_spatial, out_spatial, kernel, stride, pad, dilate):
        dk = (k - 1) * d + 1
        ends.append(max(b, (o - 1) * s + dk - n - b))
    return [int(b) for b in pad] + [int(e) for e in ends]


def _convolution(p):
    c = Chain(p)
    f = p.func
    x_shape = p.input_arrays[0].shape
    w_shape = p.input_arrays[1].shape
    kernel = w_shape[2:]
    pads = _pads(p, x_shape[2:], p.output_shapes[0][2:], kernel, f.stride, f.pad, f.dilate)
    c.op(
        "Conv", p.input_names, p.output_names,
        kernel_shape=list(kernel), strides=list(f.stride), pads=pads,
        dilations=list(f.dilate), group=int(f.groups),
    )  # fmt: skip
    return c.nodes


def _deconvolution(p):
    c = Chain(p)
    f = p.func
    x_shape = p.input_arrays[0].shape
    kernel = p.input_arrays[1].shape[2:]
    out = p.output_shapes[0][2:]
    output_padding = []
    for n, o, k, s, b, d in zip(x_shape[2:], out, kernel, f.stride, f.pad, f.dilate):
        output_padding.append(int(o - (s * (n - 1) + (k - 1) * d + 1 - 2 * b)))
    c.op(
        "ConvTranspose", p.input_names, p.output_names,
        kernel_shape=list(kernel), strides=list(f.stride), pads=[int(b) for b in f.pad] * 2,
        dilations=list(f.dilate), group=int(f.groups), output_padding=output_padding,
    )  # fmt: skip
    return c.nodes


def _depthwise_convolution(p):
    c = Chain(p)
    f = p.func
    x_shape = p.input_arrays[0].shape
    w_shape = p.input_arrays[1].shape  # (multiplier, C, kh, kw)
    multiplier, channels = w_shape[:2]
    w = c.op("Transpose", [p.input_names[1]], perm=[1, 0, 2, 3])
    w = c.op("Reshape", [w, c.const([channels * multiplier, 1, *w_shape[2:]])])
    inputs = [p.input_names[0], w]
    if len(p.input_names) == 3:
        inputs.append(p.input_names[2])
    stride = _pair(f.stride)
    pad = _pair(f.pad)
    pads = _pads(p, x_shape[2:], p.output_shapes[0][2:], w_shape[2:], stride, pad, (1, 1))
    c.op(
        "Conv", inputs, p.output_names, kernel_shape=list(w_shape[2:]), strides=list(stride),
        pads=pads, group=int(channels),
    )  # fmt: skip
    return c.nodes


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _embed_id(p):
    c = Chain(p)
    x, w = p.input_names
    ignore = p.func.ignore_label
    if ignore is None:
        c.op("Gather", [w, x], p.output_names, axis=0)
        return c.nodes
    x_dtype = p.input_arrays[0].dtype
    mask = c.op("Equal", [x, c.const(ignore, x_dtype)])
    safe = c.op("Where", [mask, c.const(0, x_dtype), x])
    rows = c.op("Gather", [w, safe], axis=0)
    mask = c.op("Unsqueeze", [mask, c.const([p.input_arrays[0].ndim])])
    zero = c.const(0, p.input_arrays[1].dtype)
    c.op("Where", [mask, zero, rows], p.output_names)
    return c.nodes


def _local_convolution_2d(p):
    """Each location's window gathered from the flattened image (constant indexes), then one
    batched MatMul with that location's filters."""
    c = Chain(p)
    x, w = p.input_names[:2]
    n_batch, c_in, height, width = p.input_arrays[0].shape
    c_out, out_h, out_w, _, kh, kw = p.input_arrays[1].shape
    sy, sx = p.func.stride
    rows = (numpy.arange(out_h) * sy)[:, None, None, None] + numpy.arange(kh)[:, None]
    cols = (numpy.arange(out_w) * sx)[None, :, None, None] + numpy.arange(kw)
    index = (rows * width + cols).reshape(out_h * out_w, kh * kw)  # (locations, window)
    flat = c.op("Reshape", [x, c.const([0, c_in, height * width])])
    windows = c.op("Gather", [flat, c.const(index)], axis=2)  # (N, C, L, K)
    windows = c.op("Transpose", [windows], perm=[2, 0, 1, 3])  # (L, N, C, K)
    windows = c.op("Reshape", [windows, c.const([out_h * out_w, -1, c_in * kh * kw])])
    filters = c.op("Transpose", [w], perm=[1, 2, 3, 4, 5, 0])  # (oh, ow, C, kh, kw, c_out)
    filters = c.op("Reshape", [filters, c.const([out_h * out_w, c_in * kh * kw, c_out])])
    y = c.op("MatMul", [windows, filters])  # (L, N, c_out)
    y = c.op("Transpose", [y], perm=[1, 2, 0])
    outputs = p.output_names if len(p.input_names) == 2 else None
    y = c.op("Reshape", [y, c.const([-1, c_out, out_h, out_w])], outputs)
    if len(p.input_names) == 3:
        c.op("Add", [y, p.input_names[2]], p.output_names)
    return c.nodes


def _bilinear(p):
    """``e1_ij e2_ik W_jkl`` as Einsum (opset 12 on), plus the linear terms when given."""
    c = Chain(p)
    e1, e2, w = p.input_names[:3]
    j, k, _ = p.input_arrays[2].shape
    e1 = c.op("Reshape", [e1, c.const([0, j])])
    e2 = c.op("Reshape", [e2, c.const([0, k])])
    if len(p.input_names) == 3:
        c.op("Einsum", [e1, e2, w], p.output_names, equation="ij,ik,jkl->il")
        return c.nodes
    v1, v2, b = p.input_names[3:]
    y = c.op("Einsum", [e1, e2, w], equation="ij,ik,jkl->il")
    y = c.op("Add", [y, c.op("MatMul", [e1, v1])])
    y = c.op("Add", [y, c.op("MatMul", [e2, v2])])
    c.op("Add", [y, b], p.output_names)
    return c.nodes


CONVERTERS = {
    "LinearFunction": _linear,
    "ConvolutionND": _convolution,
    "DeconvolutionND": _deconvolution,
    "DepthwiseConvolution2D": _depthwise_convolution,
    "EmbedIDFunction": _embed_id,
    "LocalConvolution2DFunction": _local_convolution_2d,
    "BilinearFunction": _bilinear,
}
