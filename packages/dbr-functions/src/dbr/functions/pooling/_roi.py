"""ROI geometry and the sparse linear maps shared by the ROI pooling and align functions.

Every ROI function maps ``x`` of shape ``(N, C, H, W)`` to ``y`` of shape
``(R, C, outh, outw)``: one ``outh x outw`` grid of bins per region of
interest. Once its bins are laid out (and, for maxima, the winners chosen),
``y`` is a sparse linear map of ``x``: each output element is a weighted sum
of a few elements of the same channel of the region's image, its *taps*.
Averages use taps shared by every channel (:class:`SharedTaps`); maxima keep
one tap, or the four bilinear corners of one sample point, per channel
(:class:`ChannelTaps`, :class:`AlignArgmaxTaps`). :class:`ROIGather` applies
a map and :class:`ROIScatter` its transpose; each is the other's backward, so
every ROI function is twice differentiable in ``x``.

Arrays are processed channel-first, as ``(C, N * H * W)`` columns, so that a
tap is one column index and every gather or scatter moves all channels at
once; loops run over tap offsets and sample points, never over pixels.
"""

import numbers

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.functions._gpu import reads_values

_float16 = numpy.dtype(numpy.float16)
# Entries per chunk of the sorted scatter on the CPU, to bound its temporaries.
_SCATTER_CHUNK = 1 << 22


# -- arguments ----------------------------------------------------------------------


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def positive_int(who, name, value):
    """``value`` as an int, checked to be an integer > 0.

    Raises:
        TypeError: ``value`` is not an int.
        ValueError: ``value`` is not positive.
    """
    if not _is_int(value):
        raise TypeError(f"{who}: expected {name} to be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{who}: expected {name} > 0, got {value}")
    return int(value)


def outsize_pair(who, outsize):
    """``outsize`` (an int ``o`` or a pair ``(outh, outw)``) as a pair of positive ints."""
    pair = tuple(outsize) if isinstance(outsize, (tuple, list)) else (outsize, outsize)
    if len(pair) != 2 or not all(_is_int(v) for v in pair):
        raise TypeError(f"{who}: expected outsize to be an int or a pair of ints, got {outsize!r}")
    if min(pair) <= 0:
        raise ValueError(f"{who}: expected outsize to be positive, got {outsize!r}")
    return int(pair[0]), int(pair[1])


def check_spatial_scale(who, spatial_scale):
    """``spatial_scale`` as a float, checked to be a finite real number > 0."""
    if isinstance(spatial_scale, bool) or not isinstance(spatial_scale, numbers.Real):
        raise TypeError(f"{who}: expected spatial_scale to be a float, got {spatial_scale!r}")
    scale = float(spatial_scale)
    if not (0 < scale < float("inf")):
        raise ValueError(f"{who}: expected spatial_scale to be finite and > 0, got {scale}")
    return scale


def sampling_ratio_pair(who, sampling_ratio):
    """``sampling_ratio`` (None, an int ``s`` or a pair) as a pair of (int >= 1 or None)."""
    if isinstance(sampling_ratio, (tuple, list)):
        pair = tuple(sampling_ratio)
    else:
        pair = (sampling_ratio, sampling_ratio)
    if len(pair) != 2 or not all(v is None or _is_int(v) for v in pair):
        raise TypeError(
            f"{who}: expected sampling_ratio to be None, an int or a pair of them, "
            f"got {sampling_ratio!r}"
        )
    if any(v is not None and v < 1 for v in pair):
        raise ValueError(f"{who}: expected sampling_ratio >= 1, got {sampling_ratio!r}")
    return tuple(None if v is None else int(v) for v in pair)


def check_roi_types(in_types, box_size=4):
    """Type-check ``(x, rois, roi_indices)``, or ``(x, rois)`` when ``box_size`` is 5."""
    names = ("x", "rois") if box_size == 5 else ("x", "rois", "roi_indices")
    type_check.expect(in_types.size() == len(names))
    type_check.argname(in_types, names)
    x, rois = in_types[0], in_types[1]
    type_check.expect(
        x.dtype.kind == "f",
        x.ndim == 4,
        rois.dtype.kind == "f",
        rois.ndim == 2,
        rois.shape[1] == box_size,
    )
    if box_size == 4:
        roi_indices = in_types[2]
        type_check.expect(
            roi_indices.dtype.kind == "i",
            roi_indices.ndim == 1,
            roi_indices.shape[0] == rois.shape[0],
        )


def check_batch_indices(who, name, indices, n_images):
    """Raise ValueError unless every image index ``name`` is in ``[0, n_images)``.

    Always on NumPy, where it is cheap; on other backends only in debug mode,
    since reading the result back synchronizes the device.
    """
    if not reads_values(indices) or indices.size == 0:
        return
    bad = (indices < 0) | (indices >= n_images)
    if bool(bad.any()):
        first = int(backend.to_cpu(indices[bad])[0])
        raise ValueError(
            f"{who}: expected 0 <= {name} < x.shape[0] == {n_images} for every region, got {first}"
        )


# -- documentation ------------------------------------------------------------------
# Passages of the ROI functions' docstrings, filled in by dbr.functions._docs.fill at
# the indentation of a section header.

_BOXES = """\
    rois (Variable or array): regions of shape ``(R, 4)``, each row
        ``(y_min, x_min, y_max, x_max)`` in the input image's coordinates;
        any floating dtype.
    roi_indices (Variable or array): the image of each region, a signed
        integer array of shape ``(R,)`` with values in ``[0, N)``.
    outsize (int or (int, int)): ``(outh, outw)``; ``o`` means ``(o, o)``."""
_SCALE = """\
    spatial_scale (float): the ratio of the feature map's size to the
        image's (e.g. ``1 / 16``), positive."""
_SAMPLING = """\
    sampling_ratio (None, int or (int, int)): ``(gh, gw)``, the sample
        points per bin along each axis (``s`` means ``(s, s)``), each an
        int >= 1 or None; None takes ``ceil`` of the bin's size along that
        axis, region by region."""
_RETURNS = """\
Returns:
    Variable: of shape ``(R, C, outh, outw)`` and ``x``'s dtype.

Raises:
    InvalidType: an input has the wrong dtype, ndim or shape."""
_ALIGN_ERRORS = """\
    TypeError: ``outsize``, ``spatial_scale`` or ``sampling_ratio`` has the
        wrong type.
    ValueError: one of them is out of range, or an index is.

See `Mask R-CNN <https://arxiv.org/abs/1703.06870>`_."""
_POOLING_ERRORS = """\
    TypeError: ``outsize`` or ``spatial_scale`` has the wrong type.
    ValueError: ``outsize`` or ``spatial_scale`` is not positive, or an
        index is out of range.

See `Fast R-CNN <https://arxiv.org/abs/1504.08083>`_."""
DOCS = {
    "align_args": "\n".join([_BOXES, _SCALE, _SAMPLING, "", _RETURNS, _ALIGN_ERRORS]),
    "pooling_args": "\n".join([_BOXES, _SCALE, "", _RETURNS, _POOLING_ERRORS]),
    "scale_and_returns": "\n".join([_SCALE, "", _RETURNS]),
}


# -- geometry -----------------------------------------------------------------------


def round_half_even(xp, v):
    """Round to the nearest integer, halves to even (Python's ``round``), as int64."""
    return xp.rint(v).astype(numpy.int64)


def integer_bins(start, size, n_out, length):
    """Split ``[start, start + size)`` into ``n_out`` bins of whole pixels.

    Bin ``p`` covers ``[start + floor(p * s), start + ceil((p + 1) * s))`` with
    ``s = size / n_out`` (neighbouring bins may overlap by a pixel), clipped
    to ``[0, length]``. ``s`` and the products are float64, as in Chainer,
    so a product that should be a whole number can land just above it and
    take one more pixel (``25 * (7 / 25)`` is ``7.000000000000001``).

    Args:
        start, size: int64 arrays of shape ``(R,)``; ``size >= 1``.

    Returns:
        ``(lo, hi)``: int64 arrays of shape ``(R, n_out)``; a bin is empty when
        ``hi <= lo``.
    """
    xp = backend.get_array_module(start)
    stride = size.astype(numpy.float64)[:, None] / n_out
    p = xp.arange(n_out, dtype=numpy.float64)
    lo = start[:, None] + xp.floor(p * stride).astype(numpy.int64)
    hi = start[:, None] + xp.ceil((p + 1) * stride).astype(numpy.int64)
    return xp.clip(lo, 0, length), xp.clip(hi, 0, length)


def window_taps(lo, hi, length):
    """Every pixel of each bin along one axis, as taps padded to the widest bin.

    Returns:
        ``(index, valid)``: arrays of shape ``(R, n_out, L)`` with ``L`` the
        widest bin; ``index`` is clipped into ``[0, length)`` where ``valid`` is
        False.
    """
    xp = backend.get_array_module(lo)
    count = hi - lo
    widest = int(count.max()) if count.size else 0
    offset = xp.arange(max(widest, 0), dtype=numpy.int64)
    index = xp.minimum(lo[..., None] + offset, max(length - 1, 0))
    valid = offset < count[..., None]
    return index, valid


def align_samples(start, end, n_out, length, ratio):
    """The bilinear sample points of ROI align along one axis.

    A region ``[start, end)`` (forced to be at least 1 long) is split into
    ``n_out`` bins, each sampled at ``g`` evenly spaced points, ``g = ratio`` or,
    when ``ratio`` is None, ``ceil(bin size)`` for each region. A point ``t``
    outside ``[-1, length]`` is invalid; otherwise it is clamped into
    ``[0, length - 1]`` and interpolates pixels ``floor(t)`` and ``floor(t) + 1``
    with weights ``1 - frac(t)`` and ``frac(t)``.

    Args:
        start, end: float64 arrays of shape ``(R,)``, already scaled.

    Returns:
        ``(index, weight, valid, g)``: ``index`` (int64) and ``weight``
        (float64, zero at invalid points) of shape ``(R, n_out, G, 2)`` for the
        two pixels of each point, ``valid`` of shape ``(R, n_out, G)`` (False
        also past a region's own ``g``), and ``g`` of shape ``(R,)``; ``G`` is
        the largest ``g``.
    """
    xp = backend.get_array_module(start)
    bin_size = xp.maximum(end - start, 1.0) / n_out
    if ratio is None:
        g = xp.ceil(bin_size).astype(numpy.int64)
    else:
        g = xp.full(start.shape, ratio, numpy.int64)
    n_points = int(g.max()) if g.size else 1
    i = xp.arange(n_points, dtype=numpy.int64)
    # Chainer's order of operations, so that points on pixel edges floor alike.
    t = (
        start[:, None, None]
        + xp.arange(n_out, dtype=numpy.float64)[:, None] * bin_size[:, None, None]
        + (i + 0.5) * bin_size[:, None, None] / g[:, None, None]
    )
    valid = (t >= -1.0) & (t <= length) & (i < g[:, None, None]) & (length > 0)
    t = xp.maximum(t, 0.0)
    low = xp.floor(t).astype(numpy.int64)
    edge = low >= length - 1
    low[edge] = max(length - 1, 0)
    frac = t - low
    frac[edge] = 0.0
    frac *= valid
    index = xp.stack([low, xp.where(edge, low, low + 1)], axis=-1)
    weight = xp.stack([valid.astype(numpy.float64) - frac, frac], axis=-1)
    return index, weight, valid, g


def merge_taps(index, weight, length):
    """Taps along one axis with each pixel once, the weights of a repeated pixel summed.

    The sample points of a bin are at most a pixel apart when their number
    adapts to the bin, so their taps cover a few consecutive pixels, most of
    them twice. The live taps (nonzero weight) of each bin become one tap per
    pixel of their span, padded with zero weights to the widest span; when
    that is no narrower than the taps given, they are returned as they are.

    Args:
        index, weight: arrays of shape ``(R, n_out, T)``.
        length (int): the axis' length, to keep padding indexes in range.

    Returns:
        ``(index, weight)`` of shape ``(R, n_out, L)``, ``L <= T``.
    """
    xp = backend.get_array_module(index)
    live = weight != 0
    lo = xp.where(live, index, length).min(axis=-1)
    hi = xp.where(live, index, -1).max(axis=-1)
    span = xp.maximum(hi - lo + 1, 0)
    widest = int(span.max()) if span.size else 0
    if widest >= index.shape[-1]:
        return index, weight
    offset = xp.arange(widest, dtype=numpy.int64)
    at = (index - lo[..., None])[..., None] == offset
    merged = xp.where(at, weight[..., None], 0.0).sum(axis=-2)
    return xp.minimum(lo[..., None] + offset, max(length - 1, 0)), merged


def pooling_windows(boxes, spatial_scale, outsize, size, extra):
    """The whole-pixel bins of ROI pooling along H and W.

    Each corner of ``boxes`` (``(y_min, x_min, y_max, x_max)`` rows) is scaled
    by ``spatial_scale`` in float64 and rounded, halves to even (Python's
    ``round``, which Chainer applies); a region then
    spans ``max(end - start + extra, 1)`` pixels from ``start`` on each axis,
    split by :func:`integer_bins`.

    Returns:
        ``(rows, cols)``: :func:`window_taps` along H and along W.
    """
    xp = backend.get_array_module(boxes)
    corners = round_half_even(xp, boxes.astype(numpy.float64) * spatial_scale)
    axes = []
    for lo, hi, n_out, length in zip((0, 1), (2, 3), outsize, size):
        start = corners[:, lo]
        span = xp.maximum(corners[:, hi] - start + extra, 1)
        axes.append(window_taps(*integer_bins(start, span, n_out, length), length))
    return tuple(axes)


def align_axes(boxes, spatial_scale, outsize, size, sampling_ratio):
    """:func:`align_samples` along H and along W for ``(y_min, x_min, y_max, x_max)`` rows."""
    scaled = boxes.astype(numpy.float64) * spatial_scale
    return tuple(
        align_samples(scaled[:, lo], scaled[:, lo + 2], n_out, length, ratio)
        for lo, n_out, length, ratio in zip((0, 1), outsize, size, sampling_ratio)
    )


# -- layouts ------------------------------------------------------------------------


def compute_dtype(dtype):
    """float32 for float16 (sums and interpolations accumulate in it), else ``dtype``."""
    return numpy.dtype(numpy.float32) if dtype == _float16 else numpy.dtype(dtype)


def to_columns(x, dtype):
    """``(N, C, H, W)`` as ``(C, N * H * W)`` of ``dtype`` (a view when nothing moves)."""
    n, c, h, w = x.shape
    cols = x.reshape(c, h * w) if n == 1 else x.transpose(1, 0, 2, 3).reshape(c, n * h * w)
    return cols.astype(dtype, copy=False)


def from_columns(cols, shape, dtype):
    """``(C, A * B * D)`` columns back as a C-contiguous ``(A, C, B, D)`` array of ``dtype``."""
    xp = backend.get_array_module(cols)
    a, c, b, d = shape
    out = cols.reshape(c, a, b, d).transpose(1, 0, 2, 3)
    return xp.ascontiguousarray(out.astype(dtype, copy=False))


def _scatter_sorted(out, order, sorted_cols, values_of):
    """``out[:, col] += values`` for entries sorted by column, summed per column (CPU).

    ``values_of(entries)`` returns the ``(C, len(entries))`` values of a chunk
    of ``order``; chunks bound the temporaries, and columns repeating within
    a chunk are summed by ``add.reduceat`` along the contiguous axis.
    """
    chunk = max(1, _SCATTER_CHUNK // max(out.shape[0], 1))
    for begin in range(0, len(order), chunk):
        cols = sorted_cols[begin : begin + chunk]
        starts = numpy.flatnonzero(numpy.concatenate(([True], cols[1:] != cols[:-1])))
        values = values_of(order[begin : begin + chunk])
        out[:, cols[starts]] += numpy.add.reduceat(values, starts, axis=1)


# -- sparse linear maps -------------------------------------------------------------


class SharedTaps:
    """A map whose taps are the same for every channel (the average functions).

    ``y[r, c, p, q] = sum_k weight[k, m] * x_cols[c, cols[k, m]]`` with
    ``m`` the flat index of ``(r, p, q)``.

    Args:
        x_shape: ``(N, C, H, W)``; x_dtype: its dtype.
        out_shape: ``(R, C, outh, outw)``.
        cols: int array ``(K, R * outh * outw)`` of columns of ``to_columns(x)``.
        weights: float array of the same shape, in ``compute_dtype(x_dtype)``.
    """

    __slots__ = ("x_shape", "x_dtype", "out_shape", "cols", "weights", "_sorted")

    def __init__(self, x_shape, x_dtype, out_shape, cols, weights):
        self.x_shape = x_shape
        self.x_dtype = x_dtype
        self.out_shape = out_shape
        self.cols = cols
        self.weights = weights
        self._sorted = None

    def gather(self, x):
        """``y = A x`` for ``x`` of ``x_shape``."""
        xp = backend.get_array_module(x)
        acc = compute_dtype(self.x_dtype)
        c = self.x_shape[1]
        y = xp.zeros((c, self.cols.shape[1]), acc)
        if x.size:
            xc = to_columns(x, acc)
            for cols, weights in zip(self.cols, self.weights):
                t = xp.take(xc, cols, axis=1)
                t *= weights
                y += t
        return from_columns(y, self.out_shape, self.x_dtype)

    def scatter(self, gy):
        """``gx = A^T gy`` for ``gy`` of ``out_shape``."""
        xp = backend.get_array_module(gy)
        acc = compute_dtype(self.x_dtype)
        n, c, h, w = self.x_shape
        out = xp.zeros((c, n * h * w), acc)
        if out.size and self.cols.size:
            gyc = to_columns(gy, acc)
            if xp is numpy:
                order, sorted_cols = self._sorted_entries()
                width = self.cols.shape[1]
                flat_weights = self.weights.reshape(-1)

                def values_of(entries):
                    values = numpy.take(gyc, entries % width, axis=1)
                    values *= flat_weights[entries]
                    return values

                _scatter_sorted(out, order, sorted_cols, values_of)
            else:
                for cols, weights in zip(self.cols, self.weights):
                    xp.add.at(out, (slice(None), cols), gyc * weights)
        return from_columns(out, (n, c, h, w), self.x_dtype)

    def _sorted_entries(self):
        if self._sorted is None:
            flat = self.cols.reshape(-1)
            used = numpy.flatnonzero(self.weights.reshape(-1))
            order = used[numpy.argsort(flat[used], kind="stable")]
            self._sorted = (order, flat[order])
        return self._sorted


class ChannelTaps:
    """A map with taps of their own per channel (the max functions' winners).

    ``y[r, c, p, q] = sum_k weights[k][c, m] * x_cols[c, cols[k][c, m]]`` where
    ``used[c, m]``, and 0 elsewhere, with ``m`` the flat index of ``(r, p, q)``.

    Args:
        x_shape, x_dtype, out_shape: as for :class:`SharedTaps`.
        cols: a sequence of int arrays ``(C, R * outh * outw)``, columns of
            ``to_columns(x)`` (in range even where not used).
        weights: a sequence of float arrays of that shape in
            ``compute_dtype(x_dtype)``, or None for weights of one.
        used: bool array of that shape: the elements that have taps.
    """

    __slots__ = ("x_shape", "x_dtype", "out_shape", "cols", "weights", "used")

    def __init__(self, x_shape, x_dtype, out_shape, cols, weights, used):
        self.x_shape = x_shape
        self.x_dtype = x_dtype
        self.out_shape = out_shape
        self.cols = cols
        self.weights = weights
        self.used = used

    def gather(self, x):
        """``y = A x`` for ``x`` of ``x_shape``."""
        xp = backend.get_array_module(x)
        acc = compute_dtype(self.x_dtype)
        y = xp.zeros(self.used.shape, acc)
        if x.size:
            xc = to_columns(x, acc)
            for k, cols in enumerate(self.cols):
                t = xp.take_along_axis(xc, cols, axis=1)
                if self.weights is not None:
                    t *= self.weights[k]
                y += t
            y = xp.where(self.used, y, acc.type(0))
        return from_columns(y, self.out_shape, self.x_dtype)

    def scatter(self, gy):
        """``gx = A^T gy`` for ``gy`` of ``out_shape``."""
        xp = backend.get_array_module(gy)
        acc = compute_dtype(self.x_dtype)
        n, c, h, w = self.x_shape
        size = n * h * w
        out = xp.zeros(c * size, acc)
        if out.size:
            gyc = xp.where(self.used, to_columns(gy, acc), acc.type(0))
            offsets = xp.arange(c, dtype=numpy.int64)[:, None] * size
            for k, cols in enumerate(self.cols):
                values = gyc if self.weights is None else gyc * self.weights[k]
                xp.add.at(out, (cols + offsets).ravel(), values.ravel())
        return from_columns(out.reshape(c, size), (n, c, h, w), self.x_dtype)


class AlignArgmaxTaps:
    """The winners of ROI max align: one sample point per output element and channel.

    Kept compact (the winning point's number, -1 for none, and the sample
    geometry) and expanded to the four bilinear corners of each winner only
    when applied.

    Args:
        x_shape, x_dtype, out_shape: as for :class:`SharedTaps`.
        sample: int array ``(C, R, outh, outw)``: ``i * Gw + j`` for the
            winning point ``(i, j)``, -1 for none.
        batch: int64 ``(R,)``, the image of each region.
        y_axis: ``(index, weight)`` of shape ``(R, outh, Gh, 2)`` from
            :func:`align_samples` along H.
        x_axis: likewise ``(R, outw, Gw, 2)`` along W.
    """

    __slots__ = ("x_shape", "x_dtype", "out_shape", "sample", "batch", "y_axis", "x_axis")

    def __init__(self, x_shape, x_dtype, out_shape, sample, batch, y_axis, x_axis):
        self.x_shape = x_shape
        self.x_dtype = x_dtype
        self.out_shape = out_shape
        self.sample = sample
        self.batch = batch
        self.y_axis = y_axis
        self.x_axis = x_axis

    def _expand(self):
        xp = backend.get_array_module(self.sample)
        _, _, h, w = self.x_shape
        y_index, y_weight = self.y_axis
        x_index, x_weight = self.x_axis
        n_rois, outh, g_h = y_index.shape[:3]
        outw, g_w = x_index.shape[1:3]
        acc = compute_dtype(self.x_dtype)
        c = self.sample.shape[0]
        used = self.sample >= 0
        sample = xp.where(used, self.sample, 0)
        r = xp.arange(n_rois)[:, None, None]
        # Flat positions of (r, p, i) in the row tables and of (r, q, j) in the column ones.
        at_y = ((r * outh + xp.arange(outh)[:, None]) * g_h + sample // g_w).reshape(c, -1)
        at_x = ((r * outw + xp.arange(outw)) * g_w + sample % g_w).reshape(c, -1)
        rows = self.batch[:, None, None, None] * h + y_index
        cols, weights = [], []
        for a in range(2):
            row = rows[..., a].ravel().take(at_y) * w
            wy = y_weight[..., a].ravel().astype(acc).take(at_y)
            for b in range(2):
                cols.append(row + x_index[..., b].ravel().take(at_x))
                weights.append(wy * x_weight[..., b].ravel().astype(acc).take(at_x))
        used = used.reshape(c, -1)
        return ChannelTaps(self.x_shape, self.x_dtype, self.out_shape, cols, weights, used)

    def gather(self, x):
        """``y = A x`` for ``x`` of ``x_shape``."""
        return self._expand().gather(x)

    def scatter(self, gy):
        """``gx = A^T gy`` for ``gy`` of ``out_shape``."""
        return self._expand().scatter(gy)


def separable_taps(x_shape, x_dtype, batch, y_axis, x_axis):
    """:class:`SharedTaps` whose weights factor into a row part and a column part.

    Args:
        batch: int64 ``(R,)``, the image of each region.
        y_axis: ``(index, weight)`` of shape ``(R, outh, A)``: rows and their weights.
        x_axis: ``(index, weight)`` of shape ``(R, outw, B)``: columns and theirs.

    Returns:
        SharedTaps with ``A * B`` taps per output element.
    """
    _, c, h, w = x_shape
    y_index, y_weight = y_axis
    x_index, x_weight = x_axis
    n_rois, outh, a = y_index.shape
    outw, b = x_index.shape[1:]
    rows = batch[:, None, None] * h + y_index
    cols = rows[:, :, None, :, None] * w + x_index[:, None, :, None, :]
    weights = y_weight[:, :, None, :, None] * x_weight[:, None, :, None, :]
    acc = compute_dtype(x_dtype)
    shape = (n_rois * outh * outw, a * b)
    cols = cols.reshape(shape).T.copy()
    weights = weights.reshape(shape).T.astype(acc)
    return SharedTaps(x_shape, x_dtype, (n_rois, c, outh, outw), cols, weights)


# -- the functions' common parts ----------------------------------------------------


def max_over_windows(x, batch, rows, cols, empty):
    """ROI max pooling over whole-pixel bins: the maxima and their :class:`ChannelTaps`.

    Args:
        x: ``(N, C, H, W)``.
        batch: int64 ``(R,)``.
        rows: ``(index, valid)`` of shape ``(R, outh, Lh)`` from :func:`window_taps`.
        cols: likewise ``(R, outw, Lw)``.
        empty (float): the output of an empty bin.

    Returns:
        ``(y, taps)``; the first maximum in raster order wins a tie, and an
        empty bin gives ``empty`` and no gradient.
    """
    xp = backend.get_array_module(x)
    _, c, h, w = x.shape
    row_index, row_valid = rows
    col_index, col_valid = cols
    n_rois, outh, l_h = row_index.shape
    outw, l_w = col_index.shape[1:]
    m = n_rois * outh * outw
    best = xp.zeros((c, m), x.dtype)
    arg = xp.full((c, m), -1, numpy.int64)
    if x.size and m:
        xc = to_columns(x, x.dtype)
        base = batch[:, None, None] * h + row_index
        for i in range(l_h):
            for j in range(l_w):
                col = (base[:, :, None, i] * w + col_index[:, None, :, j]).reshape(-1)
                valid = (row_valid[:, :, None, i] & col_valid[:, None, :, j]).reshape(-1)
                v = xp.take(xc, col, axis=1)
                update = ((v > best) | (arg < 0)) & valid
                xp.copyto(best, v, where=update)
                xp.copyto(arg, xp.broadcast_to(col, arg.shape), where=update)
    used = arg >= 0
    if empty != 0:
        best = xp.where(used, best, x.dtype.type(empty))
    out_shape = (n_rois, c, outh, outw)
    y = from_columns(best, out_shape, x.dtype)
    taps = ChannelTaps(x.shape, x.dtype, out_shape, (xp.maximum(arg, 0),), None, used)
    return y, taps


def max_over_samples(x, batch, y_axis, x_axis):
    """ROI max align: the largest bilinear sample of each bin and its winners' taps.

    Args:
        x: ``(N, C, H, W)``.
        batch: int64 ``(R,)``.
        y_axis: :func:`align_samples` along H.
        x_axis: likewise along W.

    Returns:
        ``(y, taps)``; the first maximum in raster order of the sample points
        wins a tie, and a bin without valid points gives ``-inf`` (as in
        Chainer) and no gradient.
    """
    xp = backend.get_array_module(x)
    _, c, h, w = x.shape
    y_index, y_weight, y_valid, _ = y_axis
    x_index, x_weight, x_valid, _ = x_axis
    n_rois, outh, g_h = y_valid.shape
    outw, g_w = x_valid.shape[1:]
    m = n_rois * outh * outw
    acc = compute_dtype(x.dtype)
    best = xp.zeros((c, m), acc)
    sample = xp.full((c, m), -1, numpy.int32)
    if x.size and m:
        xc = to_columns(x, acc)
        rows = batch[:, None, None, None] * h + y_index
        for i in range(g_h):
            for j in range(g_w):
                v = xp.zeros((c, m), acc)
                for a in range(2):
                    for b in range(2):
                        col = rows[:, :, None, i, a] * w + x_index[:, None, :, j, b]
                        weight = y_weight[:, :, None, i, a] * x_weight[:, None, :, j, b]
                        t = xp.take(xc, col.reshape(-1), axis=1)
                        t *= weight.reshape(-1).astype(acc)
                        v += t
                valid = (y_valid[:, :, None, i] & x_valid[:, None, :, j]).reshape(-1)
                update = ((v > best) | (sample < 0)) & valid
                xp.copyto(best, v, where=update)
                sample[update] = i * g_w + j
    best = xp.where(sample >= 0, best, acc.type(-numpy.inf))
    out_shape = (n_rois, c, outh, outw)
    y = from_columns(best, out_shape, x.dtype)
    taps = AlignArgmaxTaps(
        x.shape,
        x.dtype,
        out_shape,
        sample.reshape(c, n_rois, outh, outw),
        batch,
        (y_index, y_weight),
        (x_index, x_weight),
    )
    return y, taps


class ROIFunction(FunctionNode):
    """Base of the ROI functions: ``forward`` sets ``self._taps``; backward scatters through it.

    The regions and their indices get no gradient (as in Chainer).
    """

    _taps = None

    def backward(self, indexes, grad_outputs):
        ret = [None] * len(self.inputs)
        gy = grad_outputs[0]
        if 0 in indexes and gy is not None:
            ret[0] = ROIScatter(self._taps).apply((gy,))[0]
        return tuple(ret)


class IndexedROIFunction(ROIFunction):
    """Base of the ROI functions of ``(x, rois, roi_indices)`` over whole-pixel bins.

    Subclasses name themselves in ``who`` (for error messages) and implement
    ``_pool(x, rois, batch)``, returning ``(y, taps)``.
    """

    who = None

    def __init__(self, outsize, spatial_scale):
        self.outsize = outsize_pair(self.who, outsize)
        self.spatial_scale = check_spatial_scale(self.who, spatial_scale)

    def check_type_forward(self, in_types):
        check_roi_types(in_types)

    def forward(self, inputs):
        x, rois, roi_indices = inputs
        check_batch_indices(self.who, "roi_indices", roi_indices, x.shape[0])
        y, self._taps = self._pool(x, rois, roi_indices.astype(numpy.int64))
        return (y,)

    def _bins(self, x, rois):
        """The rows and columns of every bin, by :func:`pooling_windows`."""
        return pooling_windows(rois, self.spatial_scale, self.outsize, x.shape[2:], 0)


class ROIAlignFunction(IndexedROIFunction):
    """Base of the ROI align functions: bins sampled at ``sampling_ratio`` bilinear points."""

    def __init__(self, outsize, spatial_scale, sampling_ratio=None):
        super().__init__(outsize, spatial_scale)
        self.sampling_ratio = sampling_ratio_pair(self.who, sampling_ratio)

    def _bins(self, x, rois):
        """The sample points of every bin along each axis, by :func:`align_axes`."""
        return align_axes(rois, self.spatial_scale, self.outsize, x.shape[2:], self.sampling_ratio)


class ROIGather(FunctionNode):
    """``y = A x`` for the fixed sparse map ``A`` of an applied ROI function."""

    def __init__(self, taps):
        self.taps = taps

    def forward(self, inputs):
        return (self.taps.gather(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return (None if gy is None else ROIScatter(self.taps).apply((gy,))[0],)


class ROIScatter(FunctionNode):
    """``gx = A^T gy``: the gradient of an ROI function with its map ``A`` fixed."""

    def __init__(self, taps):
        self.taps = taps

    def forward(self, inputs):
        return (self.taps.scatter(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        ggx = grad_outputs[0]
        return (None if ggx is None else ROIGather(self.taps).apply((ggx,))[0],)
