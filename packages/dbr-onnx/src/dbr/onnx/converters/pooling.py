"""Converters of max, average and ROI pooling and of unpooling."""

import warnings

import numpy

import onnx
from dbr.onnx._graph import to_numpy
from dbr.onnx.converters._util import Chain, reduce, require_opset
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


# dbr's own bins need Round (opset 11); before it, ONNX's MaxRoiPool stands in.
_EXACT_ROI_POOLING_FROM = 11


def _roi_pooling(p):
    """From opset 11, dbr's own bins masked as for roi_max_pooling_2d (empty bins 0): exact,
    and runnable where MaxRoiPool is not (ONNX Runtime has no MaxRoiPool-22). Before, ONNX's
    MaxRoiPool, with a warning: runtimes differ from dbr on negative inputs and halves."""
    if p.opset_version >= _EXACT_ROI_POOLING_FROM:
        return _roi_pooling_masked(p)
    warnings.warn(
        f"{p.context.node_name}: roi_pooling_2d is written as ONNX's MaxRoiPool at opset "
        f"{p.opset_version}; runtimes may differ from dbr where the input is negative or a "
        f"corner scales to a half. Export at opset {_EXACT_ROI_POOLING_FROM} or later for "
        "dbr's exact bins.",
        UserWarning,
        stacklevel=2,
    )
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


def _roi_images(c, p):
    """``(rois, x)``: the regions in float64 and each region's image ``(R, C, H, W)`` in the
    dtype dbr computes in (float32 for float16)."""
    x, rois, roi_indices = p.input_names
    x_dtype = p.input_arrays[0].dtype
    rois = c.op("Cast", [rois], to=onnx.TensorProto.DOUBLE)
    images = c.op("Gather", [x, c.op("Cast", [roi_indices], to=onnx.TensorProto.INT64)], axis=0)
    if x_dtype == numpy.float16:
        images = c.op("Cast", [images], to=onnx.TensorProto.FLOAT)
    return rois, images


def _roi_column(c, rois, column):
    """Column ``column`` of the ``(R, 4)`` regions, as ``(R, 1)``."""
    return c.op("Gather", [rois, c.const([column])], axis=1)


def _pixel_bins(c, rois, axis, n_out, length, spatial_scale, extra=0):
    """Along one axis (0: rows, 1: columns), which pixels each whole-pixel bin covers.

    dbr's bins, computed with the same float64 operations: the corners scaled and rounded
    (halves to even), a region ``max(end - start + extra, 1)`` pixels long (``extra`` 1 where
    the end is inclusive, as in roi_pooling_2d) split at
    ``start + floor(p s)`` and ``start + ceil((p + 1) s)``, ``s = length / n_out``.

    Returns:
        ``(R, n_out, length)`` booleans.
    """
    double = numpy.float64
    corners = c.op("Round", [c.op("Mul", [rois, c.const(spatial_scale, double, "scale")])])
    start = _roi_column(c, corners, axis)
    span = c.op("Sub", [_roi_column(c, corners, axis + 2), start])
    if extra:
        span = c.op("Add", [span, c.const(extra, double, "extra")])
    span = c.op("Max", [span, c.const(1, double, "one")])
    stride = c.op("Div", [span, c.const(n_out, double, "n_out")])
    bins = numpy.arange(n_out, dtype=double)
    lo = c.op("Add", [start, c.op("Floor", [c.op("Mul", [c.const(bins, double, "p"), stride])])])
    hi = c.op("Mul", [c.const(bins + 1, double, "p_1"), stride])
    hi = c.op("Add", [start, c.op("Ceil", [hi])])
    pixels = c.const(numpy.arange(length, dtype=double), double, "pixels")
    lo, hi = (c.op("Unsqueeze", [v, c.const([2])]) for v in (lo, hi))
    return c.op("And", [c.op("Not", [c.op("Less", [pixels, lo])]), c.op("Less", [pixels, hi])])


def _roi_max_pooling(p):
    """The maximum of each bin: the pixels outside it masked to -inf, columns then rows.

    ONNX's MaxRoiPool is not used: its regions span one pixel more and its empty bins give 0.
    """
    c = Chain(p)
    rois, images = _roi_images(c, p)
    _masked_bin_maxima(c, p, rois, images, extra=0)
    return c.nodes


def _roi_pooling_masked(p):
    """roi_pooling_2d as masked maxima: regions ``(batch, x_min, y_min, x_max, y_max)`` with
    inclusive ends, the batch index truncated, empty bins 0."""
    c = Chain(p)
    x, rois = p.input_names
    rois = c.op("Cast", [rois], to=onnx.TensorProto.DOUBLE)
    batch = c.op("Cast", [c.op("Gather", [rois, c.const([0])], axis=1)], to=onnx.TensorProto.INT64)
    images = c.op("Gather", [x, c.op("Squeeze", [batch, c.const([1])])], axis=0)
    if p.input_arrays[0].dtype == numpy.float16:
        images = c.op("Cast", [images], to=onnx.TensorProto.FLOAT)
    boxes = c.op("Gather", [rois, c.const([2, 1, 4, 3])], axis=1)  # (y_min, x_min, y_max, x_max)
    _masked_bin_maxima(c, p, boxes, images, extra=1, empty=0.0)
    return c.nodes


def _masked_bin_maxima(c, p, rois, images, extra, empty=None):
    """Write each bin's maximum of ``images`` (R, C, H, W) to the output; ``empty`` (None:
    -inf) where a bin holds no pixel."""
    f = p.func
    height, width = p.input_arrays[0].shape[2:]
    (out_h, out_w), dtype = f.outsize, p.input_arrays[0].dtype
    rows = _pixel_bins(c, rois, 0, out_h, height, f.spatial_scale, extra)
    cols = _pixel_bins(c, rois, 1, out_w, width, f.spatial_scale, extra)
    compute = numpy.float32 if dtype == numpy.float16 else dtype
    lowest = c.const(-numpy.inf, compute, "lowest")
    # The image (R, C, H, 1, W) where the columns (R, 1, 1, out_w, W) are in a bin: its
    # maxima over W (R, C, 1, H, out_w) where the rows (R, 1, out_h, H, 1) are: over H.
    in_cols = c.op("Unsqueeze", [cols, c.const([1, 2])])
    masked = c.op("Where", [in_cols, c.op("Unsqueeze", [images, c.const([3])]), lowest])
    by_cols = c.op("Unsqueeze", [reduce(c, "ReduceMax", masked, [4], False), c.const([2])])
    masked = c.op("Where", [c.op("Unsqueeze", [rows, c.const([1, 4])]), by_cols, lowest])
    y = reduce(c, "ReduceMax", masked, [3], False)
    if empty is not None:
        # A bin holds a pixel when its rows and its columns each hold one: (R, 1, out_h, out_w).
        any_row = reduce(c, "ReduceMax", c.op("Cast", [rows], to=onnx.TensorProto.INT32), [2], 1)
        any_col = reduce(c, "ReduceMax", c.op("Cast", [cols], to=onnx.TensorProto.INT32), [2], 1)
        filled = c.op("Mul", [any_row, c.op("Transpose", [any_col], perm=[0, 2, 1])])
        filled = c.op(
            "Unsqueeze", [c.op("Cast", [filled], to=onnx.TensorProto.BOOL), c.const([1])]
        )
        y = c.op("Where", [filled, y, c.const(empty, compute, "empty")])
    c.op("Cast", [y], p.output_names, to=helper.np_dtype_to_tensor_dtype(dtype))


def _roi_average_pooling(p):
    """The mean of each bin: ``rows @ x @ cols^T`` with each bin's pixels weighed ``1 / count``.

    ONNX's MaxRoiPool takes maxima, and of bins one pixel wider; this is dbr's average.
    """
    c = Chain(p)
    f = p.func
    rois, images = _roi_images(c, p)
    dtype = p.input_arrays[0].dtype
    compute = numpy.float32 if dtype == numpy.float16 else dtype
    weights = []
    for axis, n_out, length in zip((0, 1), f.outsize, p.input_arrays[0].shape[2:]):
        inside = _pixel_bins(c, rois, axis, n_out, length, f.spatial_scale)
        inside = c.op("Cast", [inside], to=onnx.TensorProto.DOUBLE)
        count = reduce(c, "ReduceSum", inside, [2], True)
        count = c.op("Max", [count, c.const(1, numpy.float64, "one")])
        weight = c.op("Div", [inside, count])
        weight = c.op("Cast", [weight], to=helper.np_dtype_to_tensor_dtype(numpy.dtype(compute)))
        weights.append(c.op("Unsqueeze", [weight, c.const([1])]))  # (R, 1, n_out, length)
    rows, cols = weights
    cols = c.op("Transpose", [cols], perm=[0, 1, 3, 2])
    y = c.op("MatMul", [c.op("MatMul", [rows, images]), cols])
    c.op("Cast", [y], p.output_names, to=helper.np_dtype_to_tensor_dtype(dtype))
    return c.nodes


def _align_axis(c, rois, axis, n_out, length, spatial_scale, ratio):
    """Along one axis, the bilinear sample points of ROI align as a weight matrix.

    dbr's points, with the same float64 operations: bin ``p`` of a region ``[start, end)``
    (at least 1 long) has ``g`` points ``start + p b + (i + 0.5) b / g``, ``b`` the bin's
    size and ``g = ratio`` or ``ceil(b)``; a point outside ``[-1, length]`` is invalid, and
    one is clamped into ``[0, length - 1]``. When ``g`` adapts to the region, ``K = 2 length +
    6`` consecutive ``i`` from just before the first valid point are taken: those points are at
    least half a pixel apart, so no more than ``2 length + 2`` of them fit in ``[-1, length]``.

    Returns:
        ``(weights, valid, K)``: ``(R, n_out K, length)`` float64 interpolation weights of
        the pixels, ``(R, n_out K)`` booleans, and ``K``, the points taken per bin.
    """
    double = numpy.float64
    scaled = c.op("Mul", [rois, c.const(spatial_scale, double, "scale")])
    start = _roi_column(c, scaled, axis)  # (R, 1)
    size = c.op("Sub", [_roi_column(c, scaled, axis + 2), start])
    size = c.op("Max", [size, c.const(1, double, "one")])
    size = c.op("Div", [size, c.const(n_out, double, "n_out")])
    start, size = (c.op("Unsqueeze", [v, c.const([2])]) for v in (start, size))  # (R, 1, 1)
    count = c.op("Ceil", [size]) if ratio is None else c.const(ratio, double, "ratio")
    window = 2 * length + 6
    bins = c.const(numpy.arange(n_out, dtype=double)[:, None], double, "p")
    corner = c.op("Add", [start, c.op("Mul", [bins, size])])  # (R, n_out, 1)
    if ratio is not None:
        i = c.const(numpy.arange(ratio, dtype=double), double, "i")  # (K,)
    else:
        # The first i whose point is at -1 or after, less one for rounding, and not below 0.
        spacing = c.op("Div", [size, count])
        first = c.op("Div", [c.op("Sub", [c.const(-1, double, "minus_one"), corner]), spacing])
        first = c.op("Floor", [c.op("Sub", [first, c.const(1.5, double, "margin")])])
        first = c.op("Max", [first, c.const(0, double, "zero")])  # (R, n_out, 1)
        i = c.op("Add", [first, c.const(numpy.arange(window, dtype=double), double, "i")])
    along = c.op("Mul", [c.op("Add", [i, c.const(0.5, double, "half")]), size])
    t = c.op("Add", [corner, c.op("Div", [along, count])])
    after_start = c.op("Not", [c.op("Less", [t, c.const(-1, double, "minus_one")])])
    before_end = c.op("Not", [c.op("Greater", [t, c.const(length, double, "length")])])
    valid = c.op("And", [c.op("And", [after_start, before_end]), c.op("Less", [i, count])])
    t = c.op("Max", [t, c.const(0, double, "zero")])
    low = c.op("Min", [c.op("Floor", [t]), c.const(length - 1, double, "last")])
    edge = c.op("Not", [c.op("Less", [low, c.const(length - 1, double, "last")])])
    fraction = c.op("Where", [edge, c.const(0, double, "zero"), c.op("Sub", [t, low])])
    on = c.op("Cast", [valid], to=onnx.TensorProto.DOUBLE)
    fraction = c.op("Mul", [fraction, on])
    pixels = c.const(numpy.arange(length, dtype=double), double, "pixels")
    high = c.op("Add", [low, c.const(1, double, "one")])
    weight = None
    for at, share in ((low, c.op("Sub", [on, fraction])), (high, fraction)):
        at = c.op("Equal", [pixels, c.op("Unsqueeze", [at, c.const([3])])])
        term = c.op("Mul", [c.op("Cast", [at], to=onnx.TensorProto.DOUBLE),
                            c.op("Unsqueeze", [share, c.const([3])])])  # fmt: skip
        weight = term if weight is None else c.op("Add", [weight, term])
    n_rois = c.p.input_arrays[1].shape[0]
    k = window if ratio is None else ratio
    weight = c.op("Reshape", [weight, c.const([n_rois, n_out * k, length])])
    return weight, c.op("Reshape", [valid, c.const([n_rois, n_out * k])]), k


def _roi_max_align(p):
    """The largest bilinear sample of each bin: every sample point interpolated (a row and a
    column weight matrix around each region's image), invalid points masked to -inf.

    ONNX Runtime's RoiAlign max mode takes the maximum of the corners' weighted values, not
    of the interpolated ones, so it is not used.
    """
    require_opset(p, 11, "Equal of floating-point values")
    c = Chain(p)
    f = p.func
    rois, images = _roi_images(c, p)
    dtype = p.input_arrays[0].dtype
    compute = numpy.float32 if dtype == numpy.float16 else dtype
    to = helper.np_dtype_to_tensor_dtype(numpy.dtype(compute))
    (out_h, out_w), (height, width) = f.outsize, p.input_arrays[0].shape[2:]
    rows, row_valid, k_h = _align_axis(
        c, rois, 0, out_h, height, f.spatial_scale, f.sampling_ratio[0]
    )
    cols, col_valid, k_w = _align_axis(
        c, rois, 1, out_w, width, f.spatial_scale, f.sampling_ratio[1]
    )
    rows = c.op("Unsqueeze", [c.op("Cast", [rows], to=to), c.const([1])])
    cols = c.op("Unsqueeze", [c.op("Cast", [cols], to=to), c.const([1])])
    cols = c.op("Transpose", [cols], perm=[0, 1, 3, 2])
    samples = c.op("MatMul", [c.op("MatMul", [rows, images]), cols])
    row_valid = c.op("Unsqueeze", [row_valid, c.const([1, 3])])
    valid = c.op("And", [row_valid, c.op("Unsqueeze", [col_valid, c.const([1, 2])])])
    samples = c.op("Where", [valid, samples, c.const(-numpy.inf, compute, "lowest")])
    n_rois, channels = p.output_shapes[0][:2]
    samples = c.op("Reshape", [samples, c.const([n_rois, channels, out_h, k_h, out_w, k_w])])
    y = reduce(c, "ReduceMax", samples, [3, 5], False)
    c.op("Cast", [y], p.output_names, to=helper.np_dtype_to_tensor_dtype(dtype))
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
    "ROIMaxPooling2D": _roi_max_pooling,
    "ROIAveragePooling2D": _roi_average_pooling,
    "ROIMaxAlign2D": _roi_max_align,
}
