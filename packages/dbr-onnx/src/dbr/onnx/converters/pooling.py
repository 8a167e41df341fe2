"""Converters of max, average and ROI pooling and of unpooling."""

import numpy

import onnx
from dbr.onnx._graph import to_numpy
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
    attributes = {
        "kernel_shape": list(w.ksize), "strides": list(w.stride), "pads": _end_pads(p, w),
    }  # fmt: skip
    c.op("MaxPool", p.input_names[:1], p.output_names[:1], **attributes)
    if getattr(p.func, "indexes", None) is not None and len(w.ksize) == 2:
        # An upsampling given these indexes finds the pooling here (see _upsampling_2d).
        p.context.shared.setdefault("max_pooling", []).append(
            (to_numpy(p.func.indexes), w, p.input_names[0], p.input_arrays[0].shape, attributes)
        )
    return c.nodes


def _pooling_of(p):
    """The max pooling of this export whose indexes and windows the upsampling was given."""
    f = p.func
    indexes = to_numpy(f.indexes)
    for pooled, windows, x, x_shape, attributes in p.context.shared.get("max_pooling", ()):
        if (
            (windows.ksize, windows.stride, windows.pad) == (f.windows.ksize, f.windows.stride,
                                                              f.windows.pad)
            and pooled.shape == indexes.shape and numpy.array_equal(pooled, indexes)
        ):  # fmt: skip
            return x, x_shape, attributes
    raise ValueError(
        "dbr.onnx: Upsampling2D exports with the indexes of a max_pooling_2d of the same "
        "forward (return_indices=True), which the graph recomputes from the pooling's input; "
        f"no max pooling of this export gave indexes of shape {indexes.shape} equal to these "
        f"with ksize={f.windows.ksize}, stride={f.windows.stride}, pad={f.windows.pad}"
    )


def _upsampling_2d(p):
    """Each element added at its pooling's argmax, found again by MaxPool's Indices output.

    The argmax positions (flat in the pooled input) become positions in the output image;
    the values are added there by ScatterElements (``reduction='add'``, opset 16 on), by a
    plain ScatterElements when the windows are disjoint (no position is hit twice), and
    otherwise by a MatMul with their one-hot rows.
    """
    c = Chain(p)
    x = p.input_names[0]
    source, (n, channels, height, width), attributes = _pooling_of(p)
    p.context.shared.setdefault("computed_attributes", set()).add(id(p.func))
    out_h, out_w = p.output_shapes[0][2:]
    dtype = p.input_arrays[0].dtype
    _, found = c.op("MaxPool", [source], n_outputs=2, **attributes)
    plane = c.op("Mod", [found, c.const(height * width)])
    row = c.op("Div", [plane, c.const(width)])
    position = c.op(
        "Add", [c.op("Mul", [row, c.const(out_w)]), c.op("Mod", [plane, c.const(width)])]
    )
    planes = n * channels
    values = c.op("Reshape", [x, c.const([planes, -1])])
    position = c.op("Reshape", [position, c.const([planes, -1])])
    zeros = c.const(numpy.zeros((planes, out_h * out_w), dtype), dtype, "zeros")
    if p.opset_version >= 16:
        y = c.op("ScatterElements", [zeros, position, values], axis=1, reduction="add")
    elif p.func.windows.disjoint:
        y = c.op("ScatterElements", [zeros, position, values], axis=1)
    else:
        depth = c.const([out_h * out_w])
        one_hot = c.op("OneHot", [position, depth, c.const([0, 1], dtype, "off_on")], axis=-1)
        y = c.op("MatMul", [c.op("Unsqueeze", [values, c.const([1])]), one_hot])
    c.op("Reshape", [y, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _roi_average_align(p):
    """RoiAlign (opset 10 on) averaging ``(y_min, x_min, y_max, x_max)`` regions.

    RoiAlign's max mode is not used for roi_max_align_2d: ONNX Runtime takes the
    maximum of the corners' weighted values, not of the interpolated ones.
    """
    c = Chain(p)
    f = p.func
    x, rois, roi_indices = p.input_names
    x_dtype = p.input_arrays[0].dtype
    gh, gw = f.sampling_ratio
    if gh != gw:
        raise ValueError(
            f"dbr.onnx: ROIAverageAlign2D converts one sampling_ratio for both axes "
            f"(ONNX's RoiAlign has one), got sampling_ratio={f.sampling_ratio}"
        )
    if p.input_arrays[1].dtype != x_dtype:
        rois = c.op("Cast", [rois], to=helper.np_dtype_to_tensor_dtype(x_dtype))
    boxes = c.op("Gather", [rois, c.const([1, 0, 3, 2])], axis=1)  # (x_min, y_min, ...)
    batch = c.op("Cast", [roi_indices], to=onnx.TensorProto.INT64)
    transform = {"coordinate_transformation_mode": "output_half_pixel"}
    c.op(
        "RoiAlign", [x, boxes, batch], p.output_names, mode="avg",
        output_height=int(f.outsize[0]), output_width=int(f.outsize[1]),
        sampling_ratio=0 if gh is None else int(gh), spatial_scale=float(f.spatial_scale),
        **(transform if p.opset_version >= 16 else {}),
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
    "Upsampling2D": _upsampling_2d,
    "ROIAverageAlign2D": _roi_average_align,
}
