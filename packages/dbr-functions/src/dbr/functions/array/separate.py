"""separate: split an array into its slices along an axis, removing the axis."""

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array import stack as _stack
from dbr.functions.array._args import check_axis, check_int, fill_none_grads


class Separate(FunctionNode):
    """The slices ``x[..., i, ...]`` along ``axis``, as views; the gradient stacks them back."""

    def __init__(self, axis=0):
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        check_axis(in_types[0], self.axis)

    def forward(self, inputs):
        x = inputs[0]
        xp = get_array_module(x)
        moved = xp.moveaxis(x, self.axis, 0)
        ys = tuple([moved[i, ...] for i in range(moved.shape[0])])
        self._shape = moved.shape[1:]
        return ys

    def backward(self, indexes, grad_outputs):
        dtype = next(g.dtype for g in grad_outputs if g is not None)
        gys = fill_none_grads(grad_outputs, [self._shape] * len(grad_outputs), dtype)
        return _stack.Stack(self.axis).apply(gys)


def separate(x, axis=0):
    """Split an array along an axis into the slices it is made of.

    ``separate(x, axis)[i]`` is ``x[..., i, ...]`` (index ``i`` along
    ``axis``), so the outputs have one dimension fewer than ``x``. It is the
    inverse of :func:`~dbr.functions.array.stack.stack`.

    Args:
        x (Variable or array): input of at least one dimension.
        axis (int): the axis to separate along (negative counts from the last).

    Returns:
        tuple of Variable: ``x.shape[axis]`` views of ``x``, each of shape
        ``x.shape`` without ``axis``.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``axis`` is not an axis of ``x``.

    >>> import numpy as np
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> [y.array.tolist() for y in separate(x, axis=1)]
    [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    """
    axis = check_int(axis, "axis", "separate")
    return Separate(axis).apply((x,))
