"""Converters of max, average and ROI pooling and of unpooling."""

import numpy

from dbr.onnx.converters._util import Chain
from onnx import helper


def _end_pads(p, windows):
    x_shape = p.input_arrays[0].shape
    out = p.output_shapes[0][2:]
    ends = []
    for n, o, k, s, b in zip(x_shape[2:], out, windows.ksize, windows.stride, windows.pad):
        ends.append(int(max(b, (o - 1) * s + k - n - b)))
    return [int(b) for b in windows.pad] + ends


def _max_pooling(p):
    c = Chain(p)
    w = p.func.windows
    c.op(
        "MaxPool", p.input_names[:1], p.output_names[:1], kernel_shape=list(w.ksize),
        strides=list(w.stride), pads=_end_pads(p, w),
    )  # fmt: skip
    return c.nodes


def _average_pooling(p):
    c = Chain(p)
    w = p.func.windows
    c.op(
        "AveragePool", p.input_names, p.output_names, kernel_shape=list(w.ksize),
        strides=list(w.stride), pads=_end_pads(p, w),
        count_include_pad=int(p.func.pad_value is not None),
    )  # fmt: skip
    return c.nodes


def _unpooling(p):
    """Unpooling is a depthwise transposed convolution with a kernel of ones (overlaps add up).

    Its output is ``(in - 1) * stride + ksize - 2 * pad`` along each axis
    before the adjustment to dbr's size: ``cover_all``'s smaller output crops
    more at the end, a larger ``outsize`` adds ``output_padding``.
    """
    c = Chain(p)
    w = p.func.windows
    x_shape = p.input_arrays[0].shape
    channels = x_shape[1]
    ones = numpy.ones((channels, 1, *w.ksize), p.input_arrays[0].dtype)
    ends, extra = [], []
    for n, o, k, s, b in zip(x_shape[2:], p.output_shapes[0][2:], w.ksize, w.stride, w.pad):
        diff = int(o - ((n - 1) * s + k - 2 * b))
        ends.append(int(b) - min(diff, 0))
        extra.append(max(diff, 0))
    c.op(
        "ConvTranspose", [p.input_names[0], p.context.add_const(ones, "ones")], p.output_names,
        kernel_shape=list(w.ksize), strides=list(w.stride), group=channels,
        pads=[int(b) for b in w.pad] + ends, output_padding=extra,
    )  # fmt: skip
    return c.nodes


def _roi_pooling(p):
    """MaxRoiPool (a runtime may round a corner exactly on a half otherwise than dbr)."""
    c = Chain(p)
    x, rois = p.input_names
    x_dtype = p.input_arrays[0].dtype
    if p.input_arrays[1].dtype != x_dtype:
        to = helper.np_dtype_to_tensor_dtype(x_dtype)
        rois = c.op("Cast", [rois], to=to)
    c.op(
        "MaxRoiPool", [x, rois], p.output_names, pooled_shape=list(p.func.outsize),
        spatial_scale=float(p.func.spatial_scale),
    )  # fmt: skip
    return c.nodes


CONVERTERS = {
    "MaxPoolingND": _max_pooling,
    "AveragePoolingND": _average_pooling,
    "Unpooling1D": _unpooling,
    "Unpooling2D": _unpooling,
    "Unpooling3D": _unpooling,
    "UnpoolingND": _unpooling,
    "ROIPooling2D": _roi_pooling,
}
