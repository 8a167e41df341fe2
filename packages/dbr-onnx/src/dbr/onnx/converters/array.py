"""Converters of the array manipulations: reshape, transpose, concat, split, indexing, ..."""

import numpy

import onnx
from dbr.onnx.converters._legacy import OpsetError
from dbr.onnx.converters._util import Chain, pick_per_row, require_opset
from onnx import helper

_INT64_MIN = numpy.iinfo(numpy.int64).min


def _reshape_target(p):
    """The output shape, keeping the leading (batch) axis dynamic when it is unchanged."""
    in_shape = p.input_arrays[0].shape
    out = list(p.output_shapes[0])
    if in_shape and out and in_shape[0] == out[0] and in_shape[0] != 0:
        out[0] = 0
    return out


def _reshape(p):
    c = Chain(p)
    c.op("Reshape", [p.input_names[0], c.const(_reshape_target(p))], p.output_names)
    return c.nodes


def _transpose(p):
    c = Chain(p)
    axes = p.func.axes
    ndim = p.input_arrays[0].ndim
    perm = list(reversed(range(ndim))) if axes is None else [a % ndim for a in axes]
    c.op("Transpose", p.input_names, p.output_names, perm=perm)
    return c.nodes


def _permutation_of(p, move):
    """The permutation that ``move`` (acting on an array) applies to the axes."""
    ndim = p.input_arrays[0].ndim
    probe = numpy.empty(tuple(range(2, ndim + 2)), dtype=numpy.int8)
    return [n - 2 for n in move(probe).shape]


def _axes_mover(move):
    def convert(p):
        c = Chain(p)
        perm = _permutation_of(p, lambda a: move(p.func, a))
        c.op("Transpose", p.input_names, p.output_names, perm=perm)
        return c.nodes

    return convert


def _concat(p):
    c = Chain(p)
    axis = p.func.axis % p.input_arrays[0].ndim
    c.op("Concat", p.input_names, p.output_names, axis=axis)
    return c.nodes


def _concat_rows(p):
    """crf1d's concatenation along axis 0."""
    c = Chain(p)
    c.op("Concat", p.input_names, p.output_names, axis=0)
    return c.nodes


def _split_axis(p):
    c = Chain(p)
    axis = p.func.axis % p.input_arrays[0].ndim
    sizes = [s[axis] for s in p.output_shapes]
    c.op("Split", [p.input_names[0], c.const(sizes)], p.output_names, axis=axis)
    return c.nodes


def _separate(p):
    c = Chain(p)
    axis = p.func.axis % p.input_arrays[0].ndim
    n = p.input_arrays[0].shape[axis]
    if n == 1:
        parts = [p.input_names[0]]
    else:
        parts = c.op("Split", [p.input_names[0], c.const([1] * n)], n_outputs=n, axis=axis)
    for part, out in zip(parts, p.output_names):
        c.op("Squeeze", [part, c.const([axis])], [out])
    return c.nodes


def _stack(p):
    c = Chain(p)
    axis = p.func.axis % (p.input_arrays[0].ndim + 1)
    parts = [c.op("Unsqueeze", [x, c.const([axis])]) for x in p.input_names]
    c.op("Concat", parts, p.output_names, axis=axis)
    return c.nodes


def _stack_along(axis_for_ndim, at_least):
    """hstack, vstack or dstack: NumPy's ``at_least`` (``atleast_2d``...) of each input, then
    a Concat along ``axis_for_ndim(ndim)``."""

    def convert(p):
        c = Chain(p)
        ndim = p.input_arrays[0].ndim
        parts = p.input_names
        shape = at_least(p.input_arrays[0]).shape
        if shape != p.input_arrays[0].shape:
            parts = [c.op("Reshape", [x, c.const(shape)]) for x in parts]
        c.op("Concat", parts, p.output_names, axis=axis_for_ndim(ndim))
        return c.nodes

    return convert


def _squeeze(p):
    c = Chain(p)
    shape = p.input_arrays[0].shape
    axis = p.func.axis
    if axis is None:
        axes = [i for i, n in enumerate(shape) if n == 1]
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))]
    if not axes:
        c.op("Identity", p.input_names, p.output_names)
    else:
        c.op("Squeeze", [p.input_names[0], c.const(axes)], p.output_names)
    return c.nodes


def _expand_dims(p):
    c = Chain(p)
    axis = p.func.axis % (p.input_arrays[0].ndim + 1)
    c.op("Unsqueeze", [p.input_names[0], c.const([axis])], p.output_names)
    return c.nodes


def _broadcast(p):
    c = Chain(p)
    for x, y, shape in zip(p.input_names, p.output_names, p.output_shapes):
        c.op("Expand", [x, c.const(shape)], [y])
    return c.nodes


def _tile(p):
    c = Chain(p)
    x = p.input_names[0]
    in_shape = p.input_arrays[0].shape
    out = p.output_shapes[0]
    reps = p.func.reps
    reps = [reps] if isinstance(reps, (int, numpy.integer)) else list(reps)
    if len(out) > len(in_shape):
        x = c.op("Reshape", [x, c.const([1] * (len(out) - len(in_shape)) + list(in_shape))])
    reps = [1] * (len(out) - len(reps)) + reps
    c.op("Tile", [x, c.const(reps)], p.output_names)
    return c.nodes


def _repeat(p):
    c = Chain(p)
    x = p.input_names[0]
    shape = p.input_arrays[0].shape
    axis = p.func.axis
    if axis is None:
        x = c.op("Reshape", [x, c.const([-1])])
        n, axis = int(numpy.prod(shape)), 0
    else:
        axis %= len(shape)
        n = shape[axis]
    index = numpy.repeat(numpy.arange(n), p.func.repeats)
    c.op("Gather", [x, c.const(index)], p.output_names, axis=axis)
    return c.nodes


def _pad(p):
    c = Chain(p)
    f = p.func
    ndim = p.input_arrays[0].ndim
    width = numpy.broadcast_to(numpy.asarray(f.pad_width, dtype=numpy.int64), (ndim, 2))
    pads = list(width[:, 0]) + list(width[:, 1])
    mode = {"constant": "constant", "edge": "edge", "reflect": "reflect"}.get(f.mode)
    if mode is None:
        raise ValueError(f"dbr.onnx: Pad with mode={f.mode!r} has no ONNX equivalent")
    inputs = [p.input_names[0], c.const(pads)]
    if mode == "constant":
        values = numpy.asarray(f.constant_values)
        if values.size != 1:
            raise ValueError(
                "dbr.onnx: Pad converts only one constant_values for every axis, got "
                f"{f.constant_values!r}"
            )
        inputs.append(c.const(values.reshape(()), p.input_arrays[0].dtype))
    c.op("Pad", inputs, p.output_names, mode=mode)
    return c.nodes


def _where(p):
    c = Chain(p)
    condition = c.const(numpy.asarray(p.func.condition), numpy.bool_, "condition")
    c.op("Where", [condition, *p.input_names], p.output_names)
    return c.nodes


def _select_item(p):
    c = Chain(p)
    x, t = p.input_names
    index = c.op("Cast", [t], to=7)
    pick_per_row(c, x, index, p.input_arrays[0].shape, p.output_names[0])
    return c.nodes


def _depth2space(p):
    c = Chain(p)
    # DCR is DepthToSpace's only order before opset 11, where the attribute appears.
    mode = {"mode": "DCR"} if p.opset_version >= 11 else {}
    c.op("DepthToSpace", p.input_names, p.output_names, blocksize=int(p.func.r), **mode)
    return c.nodes


def _space2depth(p):
    c = Chain(p)
    c.op("SpaceToDepth", p.input_names, p.output_names, blocksize=int(p.func.r))
    return c.nodes


def _resize_images(p):
    c = Chain(p)
    f = p.func
    shape = list(p.input_arrays[0].shape[:2]) + list(f.output_shape)
    if f.mode == "bilinear":
        mode = "linear"
    elif f.mode == "nearest":
        mode = "nearest"
    else:
        raise ValueError(f"dbr.onnx: ResizeImages with mode={f.mode!r} has no ONNX equivalent")
    if p.opset_version < 11:
        raise OpsetError(
            f"{p.context.node_name}: ONNX has Resize with align_corners and half_pixel "
            f"coordinates from opset 11 on; export this model at opset 11 or later "
            f"(got opset {p.opset_version})"
        )
    transform = "align_corners" if f.align_corners else "half_pixel"
    # roi and scales are required inputs (empty when sizes are given) before opset 13.
    unused = "" if p.opset_version >= 13 else c.const([], numpy.float32, "empty")
    c.op(
        "Resize", [p.input_names[0], unused, unused, c.const(shape)], p.output_names, mode=mode,
        coordinate_transformation_mode=transform,
    )  # fmt: skip
    return c.nodes


def _is_array_index(s):
    return hasattr(s, "ndim") and s.ndim > 0


def _slice_bounds(s, n):
    """``(start, stop, step, squeezed)`` of the index ``s`` (a slice or an integer) on ``n``."""
    if isinstance(s, slice):
        start, stop, step = s.indices(n)
        if step < 0 and stop < 0:
            stop = _INT64_MIN
        return start, stop, step, False
    i = int(s) % n
    return i, i + 1, 1, True


def _add_slice(c, x, entries, shape):
    """Slice ``x`` by ``entries`` (``(axis, slice or integer)``) and return its name."""
    starts, ends, axes, steps = [], [], [], []
    for axis, s in entries:
        start, stop, step, _ = _slice_bounds(s, shape[axis])
        if (start, stop, step) != (0, shape[axis], 1):
            starts.append(start)
            ends.append(stop)
            axes.append(axis)
            steps.append(step)
    if not starts:
        return x
    return c.op("Slice", [x, c.const(starts), c.const(ends), c.const(axes), c.const(steps)])


def _get_item(p):
    c = Chain(p)
    x = p.input_names[0]
    shape = p.input_arrays[0].shape
    slices = list(p.func.slices)
    if Ellipsis in [s for s in slices if not hasattr(s, "ndim")]:
        at = next(i for i, s in enumerate(slices) if s is Ellipsis)
        used = sum(1 for s in slices if s is not None and s is not Ellipsis)
        slices[at : at + 1] = [slice(None)] * (len(shape) - used)
    used = sum(1 for s in slices if s is not None)
    slices += [slice(None)] * (len(shape) - used)
    if any(getattr(s, "dtype", None) == numpy.bool_ for s in slices):
        raise ValueError(
            f"dbr.onnx: GetItem converts integer indexes only, got a boolean mask in "
            f"{p.func.slices!r}"
        )
    arrays = [i for i, s in enumerate(slices) if _is_array_index(s)]
    if len(arrays) > 1:
        x = _gather_nd(p, c, x, shape, slices, arrays)
    else:
        x = _gather(c, x, shape, slices, arrays)
    c.op("Reshape", [x, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


def _gather(c, x, shape, slices, arrays):
    """Basic indexes and at most one integer array: Slice, then Gather on its axis."""
    entries, axis_of = [], {}
    axis = 0
    for i, s in enumerate(slices):
        if s is None:
            continue
        axis_of[i] = axis
        if not _is_array_index(s):
            entries.append((axis, s))
        axis += 1
    x = _add_slice(c, x, entries, shape)
    if not arrays:
        return x
    at = axis_of[arrays[0]]
    index = slices[arrays[0]]
    x = c.op("Gather", [x, c.const(numpy.where(index < 0, index + shape[at], index))], axis=at)
    # NumPy puts the array's axes first when integers and the array are not side by side.
    advanced = [i for i, s in enumerate(slices) if s is not None and not isinstance(s, slice)]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        ndim = len(shape) - 1 + index.ndim
        moved = list(range(at, at + index.ndim))
        perm = moved + [a for a in range(ndim) if a not in moved]
        x = c.op("Transpose", [x], perm=perm)
    return x


def _gather_nd(p, c, x, shape, slices, arrays):
    """Several integer arrays, side by side and after integers only: GatherND."""
    first, last = arrays[0], arrays[-1]
    if arrays != list(range(first, last + 1)) or any(
        s is None or isinstance(s, slice) for s in slices[:first]
    ):
        raise ValueError(
            "dbr.onnx: GetItem converts several integer array indexes only when they are "
            f"side by side with nothing but integers before them, got {p.func.slices!r}"
        )
    if p.opset_version < 11:
        raise OpsetError(
            f"{p.context.node_name}: ONNX has GatherND from opset 11 on; export this model "
            f"at opset 11 or later (got opset {p.opset_version})"
        )
    k = last + 1
    leading = [
        numpy.where(numpy.asarray(s) < 0, numpy.asarray(s) + shape[a], numpy.asarray(s))
        for a, s in enumerate(slices[:k])
    ]
    indices = numpy.stack(numpy.broadcast_arrays(*leading), axis=-1)
    rest, axis = [], k
    for s in slices[k:]:
        if s is not None:
            rest.append((axis, s))
            axis += 1
    x = _add_slice(c, x, rest, shape)
    return c.op("GatherND", [x, c.const(indices)])


def _flip(p):
    c = Chain(p)
    ndim = p.input_arrays[0].ndim
    axes = [a % ndim for a in _as_tuple(p.func.axis)]
    n = len(axes)
    c.op(
        "Slice",
        [p.input_names[0], c.const([-1] * n), c.const([_INT64_MIN] * n), c.const(axes),
         c.const([-1] * n)],
        p.output_names,
    )  # fmt: skip
    return c.nodes


def _as_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def _transpose_sequence(p):
    c = Chain(p)
    # Each input is one time step (B_t, ...), lengths non-increasing; the outputs
    # are one sequence per batch row.
    lengths = [x.shape[0] for x in p.input_arrays]
    for b, out in enumerate(p.output_names):
        steps = [x for x, n in zip(p.input_names, lengths) if n > b]
        rows = [c.op("Slice", [x, c.const([b]), c.const([b + 1]), c.const([0])]) for x in steps]
        c.op("Concat", rows, [out], axis=0)
    return c.nodes


def _permutate(p):
    c = Chain(p)
    x, indices = p.input_names
    axis = p.func.axis % p.input_arrays[0].ndim
    if p.func.inv:
        # inverse[indices[i]] = i, also when indices is computed in the graph
        n = len(p.input_arrays[1])
        indices = c.op("Cast", [indices], to=7)
        if p.opset_version >= 11:
            indices = c.op(
                "ScatterElements",
                [c.const(numpy.zeros(n)), indices, c.const(numpy.arange(n))],
                axis=0,
            )
        else:  # inverse[i] is where indices equals i
            hits = c.op("Equal", [c.op("Unsqueeze", [indices, c.const([0])]),
                                  c.const(numpy.arange(n).reshape(n, 1))])  # fmt: skip
            indices = c.op("ArgMax", [c.op("Cast", [hits], to=6)], axis=1, keepdims=0)
    c.op("Gather", [x, indices], p.output_names, axis=axis)
    return c.nodes


def _shape(p):
    """A node labelled ``Shape`` (e.g. a function wrapped by ``as_funcnode('Shape')``)."""
    c = Chain(p)
    c.op("Shape", p.input_names[:1], p.output_names)
    return c.nodes


def _diagonal(p):
    """``x.diagonal(offset, axis1, axis2)``: the two axes moved last, flattened, and the
    diagonal's flat positions gathered."""
    c = Chain(p)
    f = p.func
    shape = p.input_arrays[0].shape
    ndim = len(shape)
    axis1, axis2 = f.axis1 % ndim, f.axis2 % ndim
    rest = [a for a in range(ndim) if a not in (axis1, axis2)]
    x = c.op("Transpose", p.input_names, perm=rest + [axis1, axis2])
    x = c.op("Reshape", [x, c.const([shape[a] for a in rest] + [-1])])
    n1, n2 = shape[axis1], shape[axis2]
    i = numpy.arange(n1)
    j = i + f.offset
    keep = (j >= 0) & (j < n2)
    c.op("Gather", [x, c.const(i[keep] * n2 + j[keep])], p.output_names, axis=len(rest))
    return c.nodes


def _as_strided(p):
    """The view's elements as a Gather of flattened ``x``; refused when it reads memory
    around ``x`` (a view of a larger array), which the exported tensor does not hold."""
    c = Chain(p)
    f = p.func
    x_shape, x_strides, x_offset = f._x_geometry
    where = numpy.full(1, x_offset, numpy.int64)
    for n, s in zip(x_shape, x_strides):
        where = (where[:, None] + numpy.arange(n) * s).ravel()
    positions = numpy.full(1, f.storage_offset, numpy.int64)
    for n, s in zip(f.shape, f.strides):
        positions = (positions[:, None] + numpy.arange(n) * s).ravel()
    element = dict(zip(where.tolist(), range(where.size)))
    missing = [q for q in positions.tolist() if q not in element]
    if missing:
        raise ValueError(
            f"dbr.onnx: AsStrided converts views of x's own elements only, got shape="
            f"{tuple(f.shape)}, strides={tuple(f.strides)}, storage_offset={f.storage_offset} "
            f"reading memory position {missing[0]}, outside x (of shape {tuple(x_shape)})"
        )
    index = numpy.array([element[q] for q in positions.tolist()], numpy.int64)
    flat = c.op("Reshape", [p.input_names[0], c.const([-1])])
    c.op("Gather", [flat, c.const(index.reshape(f.shape))], p.output_names, axis=0)
    return c.nodes


def _pad_sequence(p):
    c = Chain(p)
    length = p.output_shapes[0][1]
    dtype = p.input_arrays[0].dtype
    rows = []
    for x, arr in zip(p.input_names, p.input_arrays):
        if arr.shape[0] < length:
            pads = [0] * arr.ndim + [length - arr.shape[0]] + [0] * (arr.ndim - 1)
            value = c.const(numpy.asarray(p.func.padding, dtype), dtype, "padding")
            x = c.op("Pad", [x, c.const(pads), value], mode="constant")
        rows.append(c.op("Unsqueeze", [x, c.const([0])]))
    c.op("Concat", rows, p.output_names, axis=0)
    return c.nodes


def _scatter_add(p):
    """``a`` plus ``b`` scattered to the flat positions of ``a[slices]``."""
    c = Chain(p)
    a, b = p.input_names
    a_arr = p.input_arrays[0]
    slices = tuple(
        s if isinstance(s, (slice, int, numpy.integer)) or s is None or s is Ellipsis
        else numpy.asarray(s)
        for s in p.func.slices
    )  # fmt: skip
    index = numpy.arange(a_arr.size).reshape(a_arr.shape)[slices].ravel()
    a_flat = c.op("Reshape", [a, c.const([-1])])
    b_flat = c.op("Reshape", [b, c.const([-1])])
    index_name = c.const(index)
    if p.opset_version >= 16:
        y = c.op("ScatterElements", [a_flat, index_name, b_flat], axis=0, reduction="add")
    elif len(numpy.unique(index)) == index.size:
        added = c.op("Add", [c.op("Gather", [a_flat, index_name], axis=0), b_flat])
        y = c.op("ScatterElements", [a_flat, index_name, added], axis=0)
    else:  # repeated positions each add: a constant 0/1 matrix sums them
        spread = numpy.zeros((index.size, a_arr.size), a_arr.dtype)
        spread[numpy.arange(index.size), index] = 1
        row = c.op("Unsqueeze", [b_flat, c.const([0])])
        added = c.op("MatMul", [row, c.const(spread, a_arr.dtype, "spread")])
        y = c.op("Add", [a_flat, c.op("Reshape", [added, c.const([-1])])])
    c.op("Reshape", [y, c.const(a_arr.shape)], p.output_names)
    return c.nodes


def _shift_along(p):
    """dbr.functions.math.cumprod's Shift: ``y[i] = x[i - step]``, ``fill`` at the vacated end."""
    c = Chain(p)
    f = p.func
    shape = p.input_arrays[0].shape
    axis = f.axis % len(shape)
    n = shape[axis]
    fill_shape = list(shape)
    fill_shape[axis] = 1
    dtype = p.input_arrays[0].dtype
    fill = c.const(numpy.full(fill_shape, f.fill, dtype), dtype, "fill")
    if n <= 1:
        c.op("Identity", [fill], p.output_names)
        return c.nodes
    x = p.input_names[0]
    if f.step > 0:
        kept = c.op("Slice", [x, c.const([0]), c.const([n - 1]), c.const([axis])])
        c.op("Concat", [fill, kept], p.output_names, axis=axis)
    else:
        kept = c.op("Slice", [x, c.const([1]), c.const([n]), c.const([axis])])
        c.op("Concat", [kept, fill], p.output_names, axis=axis)
    return c.nodes


def _shift_channels(p):
    """dbr.functions.connection.shift's Shift: each channel group moved, zeros filling in."""
    c = Chain(p)
    f = p.func
    x = p.input_names[0]
    _, channels, h, w = p.input_arrays[0].shape
    parts = []
    for start, end, oy, ox in f._offsets(channels):
        group = c.op("Slice", [x, c.const([start]), c.const([end]), c.const([1])])
        if (oy, ox) == (0, 0):
            parts.append(group)
            continue
        py, px = abs(oy), abs(ox)
        padded = c.op("Pad", [group, c.const([0, 0, py, px, 0, 0, py, px])], mode="constant")
        begin = [py - oy, px - ox]
        parts.append(c.op(
            "Slice",
            [padded, c.const(begin), c.const([begin[0] + h, begin[1] + w]), c.const([2, 3])],
        ))  # fmt: skip
    c.op("Concat", parts, p.output_names, axis=1)
    return c.nodes


def _shift(p):
    """``Shift`` names two functions: the shift along an axis of cumprod and shift's."""
    return _shift_along(p) if hasattr(p.func, "fill") else _shift_channels(p)


def _spatial_transformer_grid(p):
    c = Chain(p)
    height, width = p.func.output_shape
    dtype = p.input_arrays[0].dtype
    coords = numpy.empty((3, height, width), dtype)
    coords[0] = numpy.linspace(-1, 1, width, dtype=dtype)
    coords[1] = numpy.linspace(-1, 1, height, dtype=dtype)[:, None]
    coords[2] = 1
    grid = c.op("MatMul", [p.input_names[0], c.const(coords.reshape(3, -1), dtype, "coords")])
    c.op("Reshape", [grid, c.const([-1, 2, height, width])], p.output_names)
    return c.nodes


def _spatial_transformer_sampler(p):
    """GridSample from opset 16 (bilinear, zeros outside, -1 and 1 the corner pixels' centres);
    before it, the four corners of each point gathered and weighed as dbr's forward does."""
    c = Chain(p)
    x, grid = p.input_names
    if p.opset_version < 16:
        return _sample_corners(c, p)
    points = c.op("Transpose", [grid], perm=[0, 2, 3, 1])
    mode = "linear" if p.opset_version >= 20 else "bilinear"
    c.op(
        "GridSample", [x, points], p.output_names, mode=mode, padding_mode="zeros",
        align_corners=1,
    )  # fmt: skip
    return c.nodes


def _corner_axis(c, coordinate, size, dtype):
    """Along one axis: the low pixel (int64), the fraction past it and the two pixels' validity.

    The point ``(coordinate + 1) (size - 1) / 2`` is clipped to ``[-1, size]``, as dbr does.
    """
    scale = c.const(numpy.asarray((size - 1) / 2, dtype), dtype, "scale")
    position = c.op("Mul", [c.op("Add", [coordinate, c.const(1, dtype, "one")]), scale])
    position = c.op("Clip", [position, c.const(-1, dtype, "low"), c.const(size, dtype, "high")])
    low = c.op("Floor", [position])
    low = c.op("Clip", [low, c.const(-1, dtype, "low"), c.const(size - 1, dtype, "high")])
    fraction = c.op("Sub", [position, low])
    low_ok = c.op("Not", [c.op("Less", [low, c.const(0, dtype)])])
    high_ok = c.op("Less", [low, c.const(size - 1, dtype)])
    return c.op("Cast", [low], to=onnx.TensorProto.INT64), fraction, (low_ok, high_ok)


def _sample_corners(c, p):
    """spatial_transformer_sampler by Gather (opset 12 on, for Clip of int64 indexes)."""
    require_opset(p, 12, "Clip of int64 corner indexes")
    x, grid = p.input_names
    n, channels, height, width = p.input_arrays[0].shape
    x_dtype = p.input_arrays[0].dtype
    dtype = numpy.dtype(numpy.float32) if x_dtype == numpy.float16 else x_dtype
    n_points = int(numpy.prod(p.input_arrays[1].shape[2:]))
    points = c.op("Reshape", [grid, c.const([n, 2, n_points])])
    if dtype != x_dtype:
        points = c.op("Cast", [points], to=helper.np_dtype_to_tensor_dtype(dtype))
    cols, a, (left_ok, right_ok) = _corner_axis(
        c, c.op("Gather", [points, c.const(0)], axis=1), width, dtype
    )
    rows, b, (top_ok, bottom_ok) = _corner_axis(
        c, c.op("Gather", [points, c.const(1)], axis=1), height, dtype
    )
    w_const = c.const(width)
    top = c.op("Add", [c.op("Mul", [rows, w_const]), cols])
    bottom = c.op("Add", [top, w_const])
    corners = [top, c.op("Add", [top, c.const(1)]), bottom, c.op("Add", [bottom, c.const(1)])]
    masks = [c.op("And", [v, h]) for v in (top_ok, bottom_ok) for h in (left_ok, right_ok)]
    # Image m's pixels follow the m * H * W before them in the (C, N * H * W) columns.
    first = c.const(numpy.arange(n)[:, None] * (height * width))
    columns = c.op("Reshape", [c.op("Transpose", [x], perm=[1, 0, 2, 3]), c.const([channels, -1])])
    last = c.const(height * width - 1)
    one_minus_b = c.op("Sub", [c.const(1, dtype, "one"), b])
    w1 = c.op("Mul", [a, one_minus_b])
    w3 = c.op("Mul", [a, b])
    weights = [c.op("Sub", [one_minus_b, w1]), w1, c.op("Sub", [b, w3]), w3]
    y = None
    for index, mask, weight in zip(corners, masks, weights):
        index = c.op("Add", [c.op("Clip", [index, c.const(0), last]), first])
        value = c.op("Transpose", [c.op("Gather", [columns, index], axis=1)], perm=[1, 0, 2])
        mask = c.op("Cast", [mask], to=helper.np_dtype_to_tensor_dtype(x_dtype))
        value = c.op("Mul", [value, c.op("Unsqueeze", [mask, c.const([1])])])
        if dtype != x_dtype:
            value = c.op("Cast", [value], to=helper.np_dtype_to_tensor_dtype(dtype))
        term = c.op("Mul", [value, c.op("Unsqueeze", [weight, c.const([1])])])
        y = term if y is None else c.op("Add", [y, term])
    if dtype != x_dtype:
        y = c.op("Cast", [y], to=helper.np_dtype_to_tensor_dtype(x_dtype))
    c.op("Reshape", [y, c.const(p.output_shapes[0])], p.output_names)
    return c.nodes


CONVERTERS = {
    "Shape": _shape,
    "Permutate": _permutate,
    "Reshape": _reshape,
    "Transpose": _transpose,
    "Swapaxes": _axes_mover(lambda f, a: numpy.swapaxes(a, f.axis1, f.axis2)),
    "Moveaxis": _axes_mover(lambda f, a: numpy.moveaxis(a, f.source, f.destination)),
    "Rollaxis": _axes_mover(lambda f, a: numpy.rollaxis(a, f.axis, f.start)),
    "Concat": _concat,
    "_ConcatRows": _concat_rows,
    "SplitAxis": _split_axis,
    "Separate": _separate,
    "Stack": _stack,
    "Hstack": _stack_along(lambda n: 0 if n <= 1 else 1, numpy.atleast_1d),
    "Vstack": _stack_along(lambda n: 0, numpy.atleast_2d),
    "Dstack": _stack_along(lambda n: 2, numpy.atleast_3d),
    "Squeeze": _squeeze,
    "ExpandDims": _expand_dims,
    "Broadcast": _broadcast,
    "Tile": _tile,
    "Repeat": _repeat,
    "Pad": _pad,
    "Where": _where,
    "SelectItem": _select_item,
    "Depth2Space": _depth2space,
    "Space2Depth": _space2depth,
    "ResizeImages": _resize_images,
    "GetItem": _get_item,
    "Flip": _flip,
    "FlipLR": _flip,
    "FlipUD": _flip,
    "Diagonal": _diagonal,
    "AsStrided": _as_strided,
    "PadSequence": _pad_sequence,
    "ScatterAdd": _scatter_add,
    "Shift": _shift,
    "SpatialTransformerGrid": _spatial_transformer_grid,
    "SpatialTransformerSampler": _spatial_transformer_sampler,
    "TransposeSequence": _transpose_sequence,
}
