"""spatial_transformer_grid: the sampling grid of an affine spatial transformer."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.core.variable import Variable
from dbr.functions.array._argument import check_output_shape, reject_kwargs

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)


def _target_coordinates(xp, height, width, dtype):
    """``(3, height * width)``: the target's x and y in [-1, 1] (row-major pixels), then ones."""
    coords = xp.empty((3, height, width), dtype)
    coords[0] = xp.linspace(-1, 1, width, dtype=dtype)
    coords[1] = xp.linspace(-1, 1, height, dtype=dtype)[:, None]
    coords[2] = 1
    return coords.reshape(3, height * width)


class SpatialTransformerGrid(FunctionNode):
    """``grid[n, :, i, j] = theta[n] @ (x_j, y_i, 1)`` over the target's pixel coordinates."""

    def __init__(self, output_shape):
        self.output_shape = output_shape

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("theta",))
        theta_type = in_types[0]
        type_check.expect(
            theta_type.dtype.kind == "f",
            theta_type.ndim == 3,
            theta_type.shape[1] == 2,
            theta_type.shape[2] == 3,
        )

    def forward(self, inputs):
        theta = inputs[0]
        xp = get_array_module(theta)
        height, width = self.output_shape
        dtype = _float32 if theta.dtype == _float16 else theta.dtype
        coords = _target_coordinates(xp, height, width, dtype)
        grid = xp.matmul(theta.astype(dtype, copy=False), coords)
        return (grid.astype(theta.dtype, copy=False).reshape(-1, 2, height, width),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        height, width = self.output_shape
        coords = _target_coordinates(gy.xp, height, width, gy.dtype)
        gy = ops.reshape(gy, (gy.shape[0], 2, height * width))
        return (ops.matmul(gy, Variable(coords, requires_grad=False), transb=True),)


def spatial_transformer_grid(theta, output_shape, **kwargs):
    """The sampling grid of an affine Spatial Transformer (Jaderberg et al., 2015).

    For each pixel ``(i, j)`` of an ``h_O x w_O`` target, with coordinates
    ``x_j = -1 + 2j / (w_O - 1)`` and ``y_i = -1 + 2i / (h_O - 1)`` scaled to
    ``[-1, 1]``, the source point is
    ``(x_s, y_s) = theta[n] @ (x_j, y_i, 1)``. Feed the grid to
    :func:`~dbr.functions.array.spatial_transformer_sampler.spatial_transformer_sampler`.

    Args:
        theta (Variable or array): the affine matrices, of shape ``(n, 2, 3)``
            and a floating dtype.
        output_shape (tuple of int): ``(h_O, w_O)``, the target's size.
        **kwargs: ``use_cudnn`` is rejected with a ValueError (set
            ``dbr.core.config.use_cudnn`` instead), anything else with a
            TypeError.

    Returns:
        Variable: of shape ``(n, 2, h_O, w_O)`` and ``theta``'s dtype: channel
        0 holds the source x (horizontal) coordinates and channel 1 the y
        (vertical) ones, in the scale where ``(-1, -1)`` is the source's
        upper-left pixel and ``(1, 1)`` its lower-right one.

    >>> import numpy as np
    >>> identity = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)
    >>> spatial_transformer_grid(identity, (2, 3))[0, 0].array
    array([[-1.,  0.,  1.],
           [-1.,  0.,  1.]], dtype=float32)
    """
    reject_kwargs("spatial_transformer_grid", kwargs)
    shape = check_output_shape(output_shape, "spatial_transformer_grid")
    return SpatialTransformerGrid(shape).apply((theta,))[0]
