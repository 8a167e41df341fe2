"""Importers of shape and indexing operators: Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
Expand, Tile, Concat, Split, Slice, Gather, GatherElements, ScatterElements, Pad,
DepthToSpace, SpaceToDepth, Resize and GridSample."""

import functools
import math

import numpy

import dbr.functions as F
from dbr.core import Variable
from dbr.onnx.importers._util import array_of, axes_of, importer, ints
from onnx import helper

IMPORTERS = {}


@importer(IMPORTERS, "Reshape", static=(1,))
def _reshape(params, x, shape):
    shape = ints(shape)
    if not params.get("allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return F.reshape(x, tuple(shape))


@importer(IMPORTERS, "Flatten")
def _flatten(params, x):
    axis = params.get("axis", 1) % (x.ndim + 1) if x.ndim else 0
    return F.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))


@importer(IMPORTERS, "Transpose")
def _transpose(params, x):
    perm = params.get("perm")
    return F.transpose(x, None if perm is None else tuple(perm))


@importer(IMPORTERS, "Squeeze", static=(1,))
def _squeeze(params, x, axes=None):
    axes = axes_of(params, axes, x.ndim)
    if axes is None:
        axes = [i for i, n in enumerate(x.shape) if n == 1]
    return F.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


@importer(IMPORTERS, "Unsqueeze", static=(1,))
def _unsqueeze(params, x, axes=None):
    axes = params.get("axes") if axes is None else ints(axes)
    ndim = x.ndim + len(axes)
    axes = {a % ndim for a in axes}
    sizes = iter(x.shape)
    return F.reshape(x, tuple(1 if i in axes else next(sizes) for i in range(ndim)))


@importer(IMPORTERS, "Expand", static=(1,))
def _expand(params, x, shape):
    return F.broadcast_to(x, numpy.broadcast_shapes(x.shape, tuple(ints(shape))))


@importer(IMPORTERS, "Tile", static=(1,))
def _tile(params, x, repeats):
    return F.tile(x, tuple(ints(repeats)))


@importer(IMPORTERS, "Concat")
def _concat(params, *xs):
    return F.concat(xs, axis=params.get("axis") % xs[0].ndim)


@importer(IMPORTERS, "Split", static=(1,))
def _split(params, x, split=None):
    axis = params.get("axis", 0) % x.ndim
    sizes = params.get("split") if split is None else ints(split)
    n = x.shape[axis]
    if not sizes:
        count = params.get("num_outputs", params.n_outputs)
        size = -(-n // count)
        sizes = [min(size, n - i * size) for i in range(count)]
    if len(sizes) == 1:
        return (x,)
    return tuple(F.split_axis(x, list(numpy.cumsum(sizes)[:-1]), axis))


@importer(IMPORTERS, "Slice", static=(1, 2, 3, 4))
def _slice(params, x, starts=None, ends=None, axes=None, steps=None):
    if params.opset_version < 10:
        starts, ends, axes = params.get("starts"), params.get("ends"), params.get("axes")
    else:
        starts, ends = ints(starts), ints(ends)
        axes = None if axes is None else ints(axes)
    axes = range(len(starts)) if axes is None else [a % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else ints(steps)
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice(*slice(start, end, step).indices(x.shape[axis]))
        if step < 0 and index[axis].stop < 0:
            index[axis] = slice(index[axis].start, None, step)
    return F.get_item(x, tuple(index))


@importer(IMPORTERS, "Gather")
def _gather(params, x, indices):
    axis = params.get("axis", 0) % x.ndim
    indices = numpy.asarray(array_of(indices)) % x.shape[axis]
    index = (slice(None),) * axis + (int(indices) if indices.ndim == 0 else indices,)
    return F.get_item(x, index)


def _element_index(indices, axis):
    """The advanced index that picks ``indices`` along ``axis`` element by element."""
    grid = list(numpy.indices(indices.shape, sparse=True))
    grid[axis] = indices
    return tuple(grid)


@importer(IMPORTERS, "GatherElements")
def _gather_elements(params, x, indices):
    axis = params.get("axis", 0) % x.ndim
    indices = numpy.asarray(array_of(indices)) % x.shape[axis]
    return F.get_item(x, _element_index(indices, axis))


@importer(IMPORTERS, "ScatterElements")
def _scatter_elements(params, data, indices, updates):
    axis = params.get("axis", 0) % data.ndim
    indices = numpy.asarray(array_of(indices)) % data.shape[axis]
    index = _element_index(indices, axis)
    reduction = params.get("reduction", "none")
    if reduction == "add":
        return F.scatter_add(data, index, updates)
    if reduction != "none":
        raise params.error(f"reduction={reduction!r} is not supported (only 'none' and 'add')")
    kept = numpy.ones(data.shape, bool)
    kept[index] = False
    zeros = numpy.zeros(data.shape, array_of(data).dtype)
    return F.where(kept, data, F.scatter_add(zeros, index, updates))


@importer(IMPORTERS, "Pad", static=(1, 2, 3))
def _pad(params, x, pads=None, value=None, axes=None):
    if params.opset_version < 11:
        pads, value = params.get("pads"), params.get("value", 0.0)
    else:
        pads = ints(pads)
        value = 0 if value is None or numpy.asarray(value).size == 0 else numpy.asarray(value)
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in ints(axes)]
    widths = [[0, 0] for _ in range(x.ndim)]
    for i, axis in enumerate(axes):
        widths[axis] = [pads[i], pads[i + len(axes)]]
    crop = tuple(slice(-b if b < 0 else None, e if e < 0 else None) for b, e in widths)
    if any(b < 0 or e < 0 for b, e in widths):
        x = F.get_item(x, crop)
        widths = [[max(b, 0), max(e, 0)] for b, e in widths]
    mode = params.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise params.error(f"mode={mode!r} is not supported (constant, edge, reflect)")
    if mode == "constant":
        return F.pad(x, widths, "constant", constant_values=float(value))
    return F.pad(x, widths, mode)


def _depth_to_space(x, block, mode):
    n, c, h, w = x.shape
    depth = c // (block * block)
    if mode == "CRD":
        y = F.reshape(x, (n, depth, block, block, h, w))
        y = F.transpose(y, (0, 1, 4, 2, 5, 3))
    else:
        y = F.reshape(x, (n, block, block, depth, h, w))
        y = F.transpose(y, (0, 3, 4, 1, 5, 2))
    return F.reshape(y, (n, depth, h * block, w * block))


@importer(IMPORTERS, "DepthToSpace")
def _depth_to_space_importer(params, x):
    return _depth_to_space(x, params.get("blocksize"), params.get("mode", "DCR"))


@importer(IMPORTERS, "SpaceToDepth")
def _space_to_depth(params, x):
    block = params.get("blocksize")
    n, c, h, w = x.shape
    y = F.reshape(x, (n, c, h // block, block, w // block, block))
    y = F.transpose(y, (0, 3, 5, 1, 2, 4))
    return F.reshape(y, (n, c * block * block, h // block, w // block))


@functools.lru_cache(maxsize=256)
def _resize_matrix(attributes, opset, n, out):
    """The (n, out) matrix that resizes an axis of length ``n`` to ``out`` (float64).

    Every mode of Resize (nearest, linear, cubic) is linear in the input and works axis by
    axis: resizing the identity with ONNX's reference implementation gives the matrix.
    """
    from onnx.reference import ReferenceEvaluator

    resize = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **dict(attributes))
    evaluator = ReferenceEvaluator(resize, opsets={"": max(opset, 13)})
    identity = numpy.eye(n, dtype=numpy.float64)
    sizes = numpy.array([n, out], numpy.int64)
    return evaluator.run(None, {"x": identity, "sizes": sizes})[0]


@importer(IMPORTERS, "Resize", static=(1, 2, 3))
def _resize(params, x, roi=None, scales=None, sizes=None):
    if params.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        raise params.error("coordinate_transformation_mode='tf_crop_and_resize' is not supported")
    if params.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise params.error("keep_aspect_ratio_policy other than 'stretch' is not supported")
    axes = list(range(x.ndim)) if params.get("axes") is None else params.get("axes")
    axes = [a % x.ndim for a in axes]
    if sizes is not None and numpy.asarray(sizes).size:
        out = dict(zip(axes, ints(sizes)))
    else:
        scales = numpy.asarray(params.get("scales") if scales is None else scales).reshape(-1)
        out = {a: int(math.floor(x.shape[a] * float(s))) for a, s in zip(axes, scales)}
    keep = ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
            "exclude_outside", "extrapolation_value")  # fmt: skip
    attributes = tuple(sorted((k, params.get(k)) for k in keep if k in params.attributes))
    y = x
    dtype = array_of(x).dtype
    for axis, size in out.items():
        if size == x.shape[axis]:
            continue
        matrix = _resize_matrix(attributes, params.opset_version, x.shape[axis], size)
        matrix = matrix.astype(dtype)
        moved = F.moveaxis(y, axis, -1)
        if isinstance(y, Variable):
            matrix = y.device.send(matrix)
        y = F.moveaxis(F.matmul(moved, matrix), -1, axis)
    return y


@importer(IMPORTERS, "GridSample")
def _grid_sample(params, x, grid):
    """Bilinear sampling with zeros outside, as spatial_transformer_sampler samples.

    With ``align_corners=0`` (-1 and 1 the image's edges), a coordinate ``g`` is the
    sampler's ``g size / (size - 1)``, so such an image must be wider and taller than 1.
    """
    mode = params.get("mode", "bilinear" if params.opset_version < 20 else "linear")
    if mode not in ("bilinear", "linear") or params.get("padding_mode", "zeros") != "zeros":
        raise params.error(
            f"mode={mode!r}, padding_mode={params.get('padding_mode', 'zeros')!r}: only "
            "bilinear sampling with zeros outside is supported"
        )
    if x.ndim != 4:
        raise params.error(f"a {x.ndim}-d input: only 4-d (N, C, H, W) is supported")
    points = F.transpose(grid, (0, 3, 1, 2))
    if not params.get("align_corners", 0):
        height, width = x.shape[2:]
        if min(height, width) < 2:
            raise params.error(
                f"align_corners=0 on an image of {height} x {width} pixels: supported for "
                "images at least 2 x 2"
            )
        scale = numpy.array([width / (width - 1), height / (height - 1)], array_of(grid).dtype)
        points = points * scale.reshape(1, 2, 1, 1)
    return F.spatial_transformer_sampler(x, points)
