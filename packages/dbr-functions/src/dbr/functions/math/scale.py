"""scale: multiply ``x`` by ``y`` along the axes of ``x`` from ``axis`` on (Caffe's Scale)."""

from dbr.core import FunctionNode
from dbr.core.ops import reshape
from dbr.core.ops import sum as _sum
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.math.bias import (
    DOCS,
    _broadcast_axes,
    _check_types,
    _normalize_axis,
    _trailing_ones,
)


class Scale(FunctionNode):
    """``x * y`` with ``y`` applied along the axes of ``x`` starting at ``axis``."""

    def __init__(self, axis):
        self.axis = axis

    def check_type_forward(self, in_types):
        _check_types(in_types, self.axis)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, y = inputs
        return (force_array(x * y.reshape(_trailing_ones(x.ndim, self.axis, y.shape))),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        x, y = self.get_retained_inputs()
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gy * reshape(y, _trailing_ones(x.ndim, self.axis, y.shape)))
            else:
                axes = _broadcast_axes(x.ndim, self.axis, y.ndim)
                gxy = gy * x
                ret.append(_sum(gxy, axis=axes) if axes else gxy)
        return tuple(ret)


@fill(**DOCS)
def scale(x, y, axis=1):
    """Elementwise product ``x * y`` with ``y`` broadcast along the axes of ``x`` from ``axis`` on.

    {broadcast_y}

    Args:
        x (Variable or array): input of a floating dtype.
        y (Variable or array): the scale, of ``x``'s dtype and of shape
            ``x.shape[axis:axis + y.ndim]``.
        axis (int): the first axis of ``x`` along which ``y`` is applied
            (negative values count from the end, as ``axis + x.ndim``).

    {result_and_errors}

    >>> import numpy as np
    >>> x = np.ones((2, 3), np.float32)
    >>> scale(x, np.array([1.0, 2.0, 3.0], np.float32)).array
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)
    """
    return Scale(_normalize_axis(x, axis, "scale")).apply((x, y))[0]
