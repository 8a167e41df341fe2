"""expand_dims: insert an axis of length one."""

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import check_int


class ExpandDims(FunctionNode):
    """``x`` viewed with a new axis of length one at ``axis``."""

    def __init__(self, axis):
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        type_check.expect(-x.ndim - 1 <= self.axis, x.ndim >= self.axis)

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (get_array_module(x).expand_dims(x, self.axis),)

    def backward(self, indexes, grad_outputs):
        return (ops.reshape(grad_outputs[0], self._x_shape),)


def expand_dims(x, axis):
    """Insert an axis of length one into the shape of an array.

    Args:
        x (Variable or array): input.
        axis (int): the position of the new axis in the output, in
            ``[-x.ndim - 1, x.ndim]`` (negative counts from the end).

    Returns:
        Variable: a view of ``x`` with one more dimension.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``axis`` is out of range.

    >>> import numpy as np
    >>> expand_dims(np.zeros((2, 3), np.float32), 1).shape
    (2, 1, 3)
    """
    axis = check_int(axis, "axis", "expand_dims")
    return ExpandDims(axis).apply((x,))[0]
