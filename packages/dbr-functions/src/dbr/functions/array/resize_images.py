"""resize_images: bilinear or nearest-neighbour resizing of a batch of images.

Resizing is separable and linear: ``y = A_h @ x @ A_w.T`` with one small
interpolation matrix per axis (two non-zeros per row for bilinear, one for
nearest). So forward, backward (the transposed matrices) and every higher
derivative are the same two matrix products.
"""

import functools

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._argument import check_output_shape

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)
_MODES = ("bilinear", "nearest")


@functools.lru_cache(maxsize=64)
def _interpolation_matrix(in_size, out_size, mode, align_corners):
    """The ``(out_size, in_size)`` float64 matrix taking input rows (or columns) to output ones."""
    positions = numpy.arange(out_size, dtype=numpy.float64)
    if mode == "nearest":
        source = numpy.minimum(numpy.floor(positions * (in_size / out_size)), in_size - 1)
    elif align_corners:
        source = numpy.linspace(0, in_size - 1, out_size)
    else:
        source = numpy.maximum((positions + 0.5) * (in_size / out_size) - 0.5, 0)
    low = numpy.floor(source)
    frac = source - low
    low = low.astype(numpy.intp)
    high = numpy.minimum(low + 1, in_size - 1)
    matrix = numpy.zeros((out_size, in_size))
    rows = numpy.arange(out_size)
    numpy.add.at(matrix, (rows, low), 1 - frac)
    numpy.add.at(matrix, (rows, high), frac)
    matrix.flags.writeable = False
    return matrix


def _resample(x, mat_h, mat_w):
    """``mat_h @ x @ mat_w.T`` over the last two axes in the cheaper order (float16 in float32)."""
    dtype = x.dtype
    compute = _float32 if dtype == _float16 else dtype
    xp = get_array_module(x)
    mat_h = xp.asarray(mat_h, dtype=compute)
    mat_w = xp.asarray(mat_w, dtype=compute)
    x = x.astype(compute, copy=False)
    (out_h, h), (out_w, w) = mat_h.shape, mat_w.shape
    if h * out_w * (w + out_h) <= out_h * w * (h + out_w):
        y = xp.matmul(mat_h, xp.matmul(x, mat_w.T))
    else:
        y = xp.matmul(xp.matmul(mat_h, x), mat_w.T)
    return y.astype(dtype, copy=False)


class ResizeImages(FunctionNode):
    """Resize ``(n, c, h, w)`` images to ``(n, c, h_O, w_O)``."""

    def __init__(self, output_shape, mode, align_corners):
        self.output_shape = output_shape
        self.mode = mode
        self.align_corners = align_corners

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(
            x_type.dtype.kind == "f", x_type.ndim == 4, x_type.shape[2] > 0, x_type.shape[3] > 0
        )

    def forward(self, inputs):
        x = inputs[0]
        out_h, out_w = self.output_shape
        self._mat_h = _interpolation_matrix(x.shape[2], out_h, self.mode, self.align_corners)
        self._mat_w = _interpolation_matrix(x.shape[3], out_w, self.mode, self.align_corners)
        return (_resample(x, self._mat_h, self._mat_w),)

    def backward(self, indexes, grad_outputs):
        return SeparableResample(self._mat_h.T, self._mat_w.T).apply(grad_outputs)


class SeparableResample(FunctionNode):
    """``mat_h @ x @ mat_w.T`` over the last two axes, for constant matrices.

    The gradient of a resize, and of itself with the matrices transposed.
    """

    def __init__(self, mat_h, mat_w):
        self.mat_h = mat_h
        self.mat_w = mat_w

    def forward(self, inputs):
        return (_resample(inputs[0], self.mat_h, self.mat_w),)

    def backward(self, indexes, grad_outputs):
        return SeparableResample(self.mat_h.T, self.mat_w.T).apply(grad_outputs)


def resize_images(x, output_shape, *, mode="bilinear", align_corners=True):
    """Resize a batch of images to ``output_shape`` by bilinear or nearest-neighbour sampling.

    Output pixel ``i`` of an axis of input size ``h`` and output size ``h_O``
    samples the input at

    - ``bilinear``, ``align_corners=True``: ``i * (h - 1) / (h_O - 1)``, so
      the corner pixels of input and output coincide;
    - ``bilinear``, ``align_corners=False``: ``max((i + 0.5) * h / h_O - 0.5, 0)``
      (pixel centres scaled, as OpenCV);
    - ``nearest``: ``min(floor(i * h / h_O), h - 1)`` (``align_corners`` is
      ignored);

    interpolating linearly between the two neighbouring pixels (the last
    pixel is repeated past the edge). Width is treated the same way.

    Args:
        x (Variable or array): images of shape ``(n, c_I, h, w)``, floating
            (float16 is computed in float32).
        output_shape (tuple of int): ``(h_O, w_O)``: height first, unlike
            OpenCV.
        mode (str): ``'bilinear'`` or ``'nearest'``.
        align_corners (bool): see above.

    Returns:
        Variable: of shape ``(n, c_I, h_O, w_O)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[[[0, 1], [2, 3]]]], np.float32)
    >>> resize_images(x, (3, 3)).array
    array([[[[0. , 0.5, 1. ],
             [1. , 1.5, 2. ],
             [2. , 2.5, 3. ]]]], dtype=float32)
    """
    shape = check_output_shape(output_shape, "resize_images")
    if mode not in _MODES:
        raise ValueError(f"resize_images: expected mode to be one of {_MODES}, got {mode!r}")
    if not isinstance(align_corners, (bool, numpy.bool_)):
        raise TypeError(
            f"resize_images: expected align_corners to be a bool, got {align_corners!r}"
        )
    return ResizeImages(shape, mode, bool(align_corners)).apply((x,))[0]
