"""Converters of linear, bilinear, convolution (plain, local, deformable), deconvolution,
embed_id and im2col."""

import numpy

import onnx
from dbr.onnx.converters._util import Chain
from onnx import helper


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


def _im2col(p):
    """Every window's pixels as channels: a Gather of constant positions in the padded image.

    ``y[n, (c, a, b), i, j] = xpad[n, c, i s_y + a d_y, j s_x + b d_x]``.
    """
    c = Chain(p)
    f = p.func
    n, channels, h, w = p.input_arrays[0].shape
    out_h, out_w = p.output_shapes[0][2:]
    pads = _pads(p, (h, w), (out_h, out_w), f.ksize, f.stride, f.pad, f.dilate)
    x = p.input_names[0]
    if any(pads):
        x = c.op("Pad", [x, c.const([0, 0, *pads[:2], 0, 0, *pads[2:]])])
    width = w + pads[1] + pads[3]
    (kh, kw), (sy, sx), (dy, dx) = f.ksize, f.stride, f.dilate
    rows = numpy.arange(kh)[:, None, None, None] * dy + numpy.arange(out_h)[:, None] * sy
    cols = numpy.arange(kw)[:, None, None] * dx + numpy.arange(out_w) * sx
    positions = rows * width + cols  # (kh, kw, out_h, out_w)
    flat = c.op("Reshape", [x, c.const([n, channels, -1])])
    windows = c.op("Gather", [flat, c.const(positions)], axis=2)
    c.op("Reshape", [windows, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _deformable_convolution_2d_sampler(p):
    """Each tap's four bilinear corners gathered as dbr's forward does, then one MatMul.

    Tap ``t = p k_W + q`` of the window at ``(i, j)`` reads the point ``(i s_Y - p_H + p +
    offset_y, j s_X - p_W + q + offset_x)`` (clipped to ``[-2, size + 1]``, which changes no
    value), its corners weighed by the point's fractional parts, pixels outside the image
    zero; the windows ``(n h_O w_O, T c)`` then meet the filters ``(T c, c_O)``.
    """
    c = Chain(p)
    f = p.func
    x, offset, w = p.input_names[:3]
    x_arr, offset_arr, w_arr = p.input_arrays[:3]
    n, channels, height, width = x_arr.shape
    c_out, _, kh, kw = w_arr.shape
    _, _, out_h, out_w = offset_arr.shape
    taps = kh * kw
    dtype = numpy.promote_types(offset_arr.dtype, numpy.float32)
    to = helper.np_dtype_to_tensor_dtype(dtype)
    if dtype != offset_arr.dtype:
        offset = c.op("Cast", [offset], to=to)
    base_x = (numpy.arange(out_w) * f.stride[1] - f.pad[1])[:, None] + numpy.tile(
        numpy.arange(kw), kh
    )
    base_y = (numpy.arange(out_h) * f.stride[0] - f.pad[0])[:, None] + numpy.repeat(
        numpy.arange(kh), kw
    )
    axes = []
    for part, base, size in ((0, base_x[None, None], width), (1, base_y[None, :, None], height)):
        bounds = [c.const([part * taps]), c.const([(part + 1) * taps]), c.const([1])]
        moved = c.op("Slice", [offset, *bounds])
        moved = c.op("Transpose", [moved], perm=[0, 2, 3, 1])  # (n, h_O, w_O, T)
        point = c.op("Add", [moved, c.const(base, dtype, "base")])
        point = c.op("Clip", [point, c.const(-2, dtype, "low"), c.const(size + 1, dtype, "high")])
        low = c.op("Floor", [point])
        axes.append((low, c.op("Sub", [point, low])))
    rows = c.op("Reshape", [c.op("Transpose", [x], perm=[0, 2, 3, 1]), c.const([-1, channels])])
    if dtype != x_arr.dtype:
        rows = c.op("Cast", [rows], to=to)
    first = c.const(numpy.arange(n).reshape(n, 1, 1, 1) * (height * width))
    (low_x, a), (low_y, b) = axes
    one = c.const(1, dtype, "one")
    col = None
    for step_y, step_x in ((0, 0), (0, 1), (1, 0), (1, 1)):
        index, inside = first, None
        for low, step, size, stride in ((low_y, step_y, height, width), (low_x, step_x, width, 1)):
            at = c.op("Add", [low, c.const(step, dtype, "step")]) if step else low
            ok = c.op("Not", [c.op("Less", [at, c.const(0, dtype, "zero")])])
            ok = c.op("And", [ok, c.op("Less", [at, c.const(size, dtype, "size")])])
            inside = ok if inside is None else c.op("And", [inside, ok])
            at = c.op("Clip", [at, c.const(0, dtype, "low"), c.const(size - 1, dtype, "high")])
            at = c.op("Cast", [at], to=onnx.TensorProto.INT64)
            index = c.op("Add", [index, c.op("Mul", [at, c.const(stride)]) if stride > 1 else at])
        weight_y = b if step_y else c.op("Sub", [one, b])
        weight_x = a if step_x else c.op("Sub", [one, a])
        weight = c.op("Mul", [c.op("Mul", [weight_y, weight_x]), c.op("Cast", [inside], to=to)])
        term = c.op("Gather", [rows, index], axis=0)  # (n, h_O, w_O, T, c)
        term = c.op("Mul", [term, c.op("Unsqueeze", [weight, c.const([4])])])
        col = term if col is None else c.op("Add", [col, term])
    col = c.op("Reshape", [col, c.const([n * out_h * out_w, taps * channels])])
    w_cols = c.op("Reshape", [c.op("Transpose", [w], perm=[2, 3, 1, 0]), c.const([-1, c_out])])
    if dtype != w_arr.dtype:
        w_cols = c.op("Cast", [w_cols], to=to)
    y = c.op("MatMul", [col, w_cols])
    if dtype != x_arr.dtype:
        y = c.op("Cast", [y], to=helper.np_dtype_to_tensor_dtype(x_arr.dtype))
    y = c.op("Reshape", [y, c.const([n, out_h, out_w, c_out])])
    if len(p.input_names) == 3:
        c.op("Transpose", [y], p.output_names, perm=[0, 3, 1, 2])
    else:
        bias = c.op("Reshape", [p.input_names[3], c.const([1, c_out, 1, 1])])
        c.op("Add", [c.op("Transpose", [y], perm=[0, 3, 1, 2]), bias], p.output_names)
    return c.nodes


CONVERTERS = {
    "LinearFunction": _linear,
    "ConvolutionND": _convolution,
    "DeconvolutionND": _deconvolution,
    "DepthwiseConvolution2D": _depthwise_convolution,
    "EmbedIDFunction": _embed_id,
    "LocalConvolution2DFunction": _local_convolution_2d,
    "BilinearFunction": _bilinear,
    "Im2Col": _im2col,
    "DeformableConvolution2DSampler": _deformable_convolution_2d_sampler,
}
