"""spatial_transformer_sampler: bilinear sampling of images at arbitrary points.

Each output pixel reads the four input pixels around its sampling point
(zeros outside the image) with bilinear weights ``(1 - a)(1 - b)``,
``a(1 - b)``, ``(1 - a)b`` and ``ab``, where ``a`` and ``b`` are the point's
fractional offsets along x and y. The forward is one fused node. Its backward
is written with differentiable pieces (a gather of the four corners and its
transpose, a scatter-add, and elementwise arithmetic on ``a`` and ``b``), so
that the sampler is differentiable twice and more, in ``x`` and in ``grid``.
"""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.core.variable import Variable
from dbr.functions.array._argument import reject_kwargs
from dbr.functions.array.stack import stack
from dbr.functions.math.maximum import MaskGrad

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)


class _Geometry:
    """Where each output pixel samples: corner indexes, masks and fractional offsets.

    Attributes (``B`` images, ``P`` output pixels, the four corners in the
    order top-left, top-right, bottom-left, bottom-right):
        index: ``(B, 1, 4P)`` flat pixel indexes of the corners, clipped into
            the image.
        mask: ``(B, 4, P)`` booleans, true for corners inside the image.
        frac_x, frac_y: ``(B, P)`` offsets of the point from its top-left
            corner, in ``[0, 1]``.
        inside_x, inside_y: ``(B, P)`` booleans, true where the coordinate was
            not clipped (the gradient of the grid passes only there).
        scale_x, scale_y: pixels per unit of the grid's ``[-1, 1]`` scale.
    """

    __slots__ = (
        "index",
        "mask",
        "frac_x",
        "frac_y",
        "inside_x",
        "inside_y",
        "scale_x",
        "scale_y",
    )

    def __init__(self, grid, height, width):
        xp = get_array_module(grid)
        dtype = _float32 if grid.dtype == _float16 else grid.dtype
        points = grid.reshape(grid.shape[0], 2, grid.shape[2] * grid.shape[3])
        points = points.astype(dtype, copy=False)
        self.scale_x = (width - 1) / 2
        self.scale_y = (height - 1) / 2
        cols, self.frac_x, self.inside_x, col_ok = _axis(xp, points[:, 0], width, self.scale_x)
        rows, self.frac_y, self.inside_y, row_ok = _axis(xp, points[:, 1], height, self.scale_y)
        top, bottom = rows * width, (rows + 1) * width
        self.index = xp.concatenate(
            [top + cols, top + cols + 1, bottom + cols, bottom + cols + 1], axis=1
        )[:, None]
        left_ok, right_ok = col_ok
        top_ok, bottom_ok = row_ok
        self.mask = xp.stack(
            [top_ok & left_ok, top_ok & right_ok, bottom_ok & left_ok, bottom_ok & right_ok],
            axis=1,
        )
        # Corners outside the image read (and write) a clipped, in-image index;
        # the mask zeroes them.
        xp.clip(self.index, 0, height * width - 1, out=self.index)

    def weights(self, dtype):
        """``(B, 4, P)`` bilinear weights of the corners (unmasked), as an array."""
        a, b = self.frac_x, self.frac_y
        w = get_array_module(a).empty((a.shape[0], 4, a.shape[1]), a.dtype)
        w[:, 1] = a * (1 - b)
        w[:, 3] = a * b
        w[:, 0] = (1 - b) - w[:, 1]
        w[:, 2] = b - w[:, 3]
        return w.astype(dtype, copy=False)


def _axis(xp, coordinate, size, scale):
    """Pixel indexes, offsets, the unclipped mask and the corners' validity along one axis.

    The image is read as if padded by one pixel of zeros, as Chainer does:
    the coordinate is clipped to ``[-1, size]``.
    """
    position = (coordinate + 1) * coordinate.dtype.type(scale)
    inside = (position > -1) & (position < size)
    position = xp.clip(position, -1, size)
    low = xp.minimum(xp.floor(position), size - 1)
    frac = position - low
    low = low.astype(numpy.intp)
    return low, frac, inside, (low >= 0, low + 1 <= size - 1)


class SpatialTransformerSampler(FunctionNode):
    """Sample ``x`` (n, c, h, w) bilinearly at the points of ``grid`` (n, 2, h_O, w_O)."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "grid"))
        x_type, grid_type = in_types
        type_check.expect(
            x_type.dtype.kind == "f",
            grid_type.dtype == x_type.dtype,
            x_type.ndim == 4,
            grid_type.ndim == 4,
            grid_type.shape[1] == 2,
            x_type.shape[0] == grid_type.shape[0],
            x_type.shape[2] > 0,
            x_type.shape[3] > 0,
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, grid = inputs
        n, c, height, width = x.shape
        geometry = _Geometry(grid, height, width)
        compute = _float32 if x.dtype == _float16 else x.dtype
        corners = _gather(x, geometry.index, geometry.mask).astype(compute, copy=False)
        w = geometry.weights(compute)
        y = corners[:, :, 0] * w[:, None, 0]
        for k in range(1, 4):
            y += corners[:, :, k] * w[:, None, k]
        return (y.astype(x.dtype, copy=False).reshape((n, c) + grid.shape[2:]),)

    def backward(self, indexes, grad_outputs):
        x, grid = self.get_retained_inputs()
        n, c, height, width = x.shape
        geometry = _Geometry(grid.array, height, width)
        frac_x, frac_y = SamplingFractions(geometry).apply((grid,))
        n_points = grid.shape[2] * grid.shape[3]
        gy = ops.reshape(grad_outputs[0], (n, c, 1, n_points))
        one_x = 1 - frac_x
        one_y = 1 - frac_y
        ret = []
        if 0 in indexes:
            w = stack([one_y * one_x, one_y * frac_x, frac_y * one_x, frac_y * frac_x], axis=1)
            gcorners = gy * ops.reshape(w, (n, 1, 4, n_points))
            ret.append(
                ScatterCorners(geometry.index, geometry.mask, x.shape).apply((gcorners,))[0]
            )
        if 1 in indexes:
            corners = GatherCorners(geometry.index, geometry.mask).apply((x,))[0]
            along_corners = ops.sum(gy * corners, axis=1)
            dw_dx = stack([-one_y, one_y, -frac_y, frac_y], axis=1)
            dw_dy = stack([-one_x, -frac_x, one_x, frac_x], axis=1)
            g_frac_x = ops.sum(along_corners * dw_dx, axis=1)
            g_frac_y = ops.sum(along_corners * dw_dy, axis=1)
            ret.append(_fractions_to_grid(g_frac_x, g_frac_y, geometry, grid.shape))
        return tuple(ret)


def _fractions_to_grid(g_frac_x, g_frac_y, geometry, grid_shape):
    """The grid's gradient from those of the fractional offsets (None means zero)."""
    parts = []
    for g, other, inside, scale in (
        (g_frac_x, g_frac_y, geometry.inside_x, geometry.scale_x),
        (g_frac_y, g_frac_x, geometry.inside_y, geometry.scale_y),
    ):
        if g is None:
            g = Variable(other.xp.zeros(other.shape, other.dtype), requires_grad=False)
        else:
            g = MaskGrad(inside).apply((g,))[0] * scale
        parts.append(g)
    return ops.reshape(stack(parts, axis=1), grid_shape)


class SamplingFractions(FunctionNode):
    """The fractional offsets ``(frac_x, frac_y)`` of each sampling point, as functions of grid."""

    def __init__(self, geometry):
        self.geometry = geometry

    def forward(self, inputs):
        grid = inputs[0]
        self._grid_shape = grid.shape
        geometry = self.geometry
        return (
            geometry.frac_x.astype(grid.dtype, copy=False),
            geometry.frac_y.astype(grid.dtype, copy=False),
        )

    def backward(self, indexes, grad_outputs):
        return (_fractions_to_grid(*grad_outputs, self.geometry, self._grid_shape),)


def _positions(xp, x_shape, index):
    """``(n, c, 4P)`` positions of the corners in the flattened ``(n, c, h, w)`` image."""
    n, c, height, width = x_shape
    offsets = xp.arange(0, n * c * height * width, height * width).reshape(n, c, 1)
    return offsets + index


def _gather(x, index, mask):
    xp = get_array_module(x)
    n, c = x.shape[:2]
    flat = xp.ascontiguousarray(x).reshape(-1)
    positions = _positions(xp, x.shape, index)
    corners = xp.take(flat, positions).reshape(n, c, 4, index.shape[2] // 4)
    corners *= mask[:, None]
    return corners


class GatherCorners(FunctionNode):
    """The four corners of every sampling point: ``(n, c, h, w)`` to ``(n, c, 4, P)``."""

    def __init__(self, index, mask):
        self.index = index
        self.mask = mask

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (_gather(x, self.index, self.mask),)

    def backward(self, indexes, grad_outputs):
        return ScatterCorners(self.index, self.mask, self._x_shape).apply(grad_outputs)


class ScatterCorners(FunctionNode):
    """The transpose of :class:`GatherCorners`: corner values added into an image."""

    def __init__(self, index, mask, x_shape):
        self.index = index
        self.mask = mask
        self.x_shape = x_shape

    def forward(self, inputs):
        corners = inputs[0]
        n, c, height, width = self.x_shape
        xp = get_array_module(corners)
        values = corners * self.mask[:, None]
        positions = _positions(xp, self.x_shape, self.index)
        gx = xp.zeros(n * c * height * width, corners.dtype)
        xp.add.at(gx, positions.reshape(-1), values.reshape(-1))
        return (gx.reshape(self.x_shape),)

    def backward(self, indexes, grad_outputs):
        return GatherCorners(self.index, self.mask).apply(grad_outputs)


def spatial_transformer_sampler(x, grid, **kwargs):
    """Sample ``x`` bilinearly at the points of ``grid`` (a Spatial Transformer's sampler).

    The point ``grid[n, :, i, j] = (x_s, y_s)``, in the scale where ``-1``
    and ``1`` are the centres of the first and last pixels, lies at pixel
    coordinates ``u = (x_s + 1)(w - 1) / 2``, ``v = (y_s + 1)(h - 1) / 2``;
    ``y[n, :, i, j]`` interpolates bilinearly between the four pixels around
    ``(u, v)``, reading zeros outside the image (coordinates are clipped to
    ``[-1, w]`` and ``[-1, h]``, where the gradient of ``grid`` is 0). See
    Jaderberg et al., Spatial Transformer Networks (2015).

    Args:
        x (Variable or array): images of shape ``(n, c_I, h, w)``, floating.
        grid (Variable or array): sampling points of shape
            ``(n, 2, h_O, w_O)`` and ``x``'s dtype: channel 0 holds the
            horizontal coordinates, channel 1 the vertical ones, e.g. from
            :func:`~dbr.functions.array.spatial_transformer_grid.spatial_transformer_grid`.
        **kwargs: ``use_cudnn`` is rejected with a ValueError (set
            ``dbr.core.config.use_cudnn`` instead), anything else with a
            TypeError.

    Returns:
        Variable: of shape ``(n, c_I, h_O, w_O)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[[[0, 1], [2, 3]]]], np.float32)
    >>> grid = np.array([[[[0.0]], [[-1.0]]]], np.float32)
    >>> spatial_transformer_sampler(x, grid).array
    array([[[[0.5]]]], dtype=float32)
    """
    reject_kwargs("spatial_transformer_sampler", kwargs)
    return SpatialTransformerSampler().apply((x, grid))[0]
