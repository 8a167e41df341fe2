"""bias: add ``y`` to ``x`` along the axes of ``x`` starting at ``axis`` (Caffe's Bias layer)."""

import numbers

from dbr.core import FunctionNode, type_check
from dbr.core.ops import sum as _sum
from dbr.core.utils import force_array
from dbr.functions._docs import fill

# How bias and scale broadcast y, and their result and errors (see dbr.functions._docs.fill).
DOCS = {
    "broadcast_y": """\
``y.shape`` must equal ``x.shape[axis:axis + y.ndim]``; ``y`` is repeated
along the other axes of ``x``. For example ``x`` of shape
``(100, 3, 40, 5, 6)``, ``y`` of shape ``(3, 40)`` and ``axis=1`` give
NumPy's broadcasting of ``y`` as shape ``(1, 3, 40, 1, 1)``. Note that
``axis`` is the first axis of ``x`` that ``y`` applies to, not NumPy's
reduction axis.""",
    "result_and_errors": """\
Returns:
    Variable: of ``x``'s shape and dtype.

Raises:
    TypeError: ``axis`` is not an int.
    ValueError: ``axis`` is not in ``[-x.ndim, x.ndim]``.""",
}


def _normalize_axis(x, axis, name):
    """``axis`` as a non-negative int after checking it against ``x.ndim``."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name}: expected axis to be an int, got {axis!r}")
    ndim = getattr(x, "ndim", None)
    if not isinstance(ndim, int):
        raise TypeError(f"{name}: expected x to be a Variable or an array, got {type(x).__name__}")
    if not -ndim <= axis <= ndim:
        raise ValueError(
            f"{name}: expected axis in [{-ndim}, {ndim}] for x of ndim {ndim}, got {axis}"
        )
    return int(axis) + ndim if axis < 0 else int(axis)


def _check_types(in_types, axis):
    """The type check shared by bias and scale: ``y.shape == x.shape[axis:axis + y.ndim]``."""
    type_check.argname(in_types, ("x", "y"))
    x, y = in_types
    type_check.expect(x.dtype.kind == "f", y.dtype == x.dtype, y.ndim + axis <= x.ndim)
    n = type_check.eval(y.ndim)
    type_check.expect(x.shape[axis : axis + n] == y.shape)


def _trailing_ones(x_ndim, axis, y_shape):
    """``y_shape`` padded with 1s so that it broadcasts against ``x`` from ``axis`` on."""
    return tuple(y_shape) + (1,) * (x_ndim - axis - len(y_shape))


def _broadcast_axes(x_ndim, axis, y_ndim):
    """The axes of ``x`` along which ``y`` is broadcast (those a gradient of ``y`` sums over)."""
    return tuple(range(axis)) + tuple(range(axis + y_ndim, x_ndim))


class Bias(FunctionNode):
    """``x + y`` with ``y`` applied along the axes of ``x`` starting at ``axis``."""

    def __init__(self, axis):
        self.axis = axis

    def check_type_forward(self, in_types):
        _check_types(in_types, self.axis)

    def forward(self, inputs):
        x, y = inputs
        self._ndims = (x.ndim, y.ndim)
        return (force_array(x + y.reshape(_trailing_ones(x.ndim, self.axis, y.shape))),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gy)
            else:
                axes = _broadcast_axes(self._ndims[0], self.axis, self._ndims[1])
                ret.append(_sum(gy, axis=axes) if axes else gy)
        return tuple(ret)


@fill(**DOCS)
def bias(x, y, axis=1):
    """Elementwise sum ``x + y`` with ``y`` broadcast along the axes of ``x`` from ``axis`` on.

    {broadcast_y}

    Args:
        x (Variable or array): input of a floating dtype.
        y (Variable or array): the bias, of ``x``'s dtype and of shape
            ``x.shape[axis:axis + y.ndim]``.
        axis (int): the first axis of ``x`` along which ``y`` is applied
            (negative values count from the end, as ``axis + x.ndim``).

    {result_and_errors}

    >>> import numpy as np
    >>> x = np.zeros((2, 3, 2), np.float32)
    >>> bias(x, np.array([1.0, 2.0, 3.0], np.float32)).array[0]
    array([[1., 1.],
           [2., 2.],
           [3., 3.]], dtype=float32)
    """
    return Bias(_normalize_axis(x, axis, "bias")).apply((x, y))[0]
