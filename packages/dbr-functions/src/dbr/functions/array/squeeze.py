"""squeeze: remove axes of length one."""

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import check_axis, check_int_tuple


class Squeeze(FunctionNode):
    """``x`` viewed without the given axes of length one (all of them if ``axis`` is None)."""

    def __init__(self, axis=None):
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        if self.axis is None:
            return
        for a in self.axis:
            check_axis(x, a)
        # Repeated axes and axes longer than one are ValueErrors, as NumPy's (and Chainer's).
        ndim = type_check.eval(x.ndim)
        if len({a % ndim for a in self.axis}) != len(self.axis):
            raise ValueError(
                f"squeeze: duplicate value in axis {self.axis} of an x of {ndim} axes"
            )
        shape = type_check.eval(x.shape)
        for a in self.axis:
            if shape[a] != 1:
                raise ValueError(
                    f"squeeze: expected axis {a} of x to have length 1, got x.shape == {shape}"
                )

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (get_array_module(x).squeeze(x, self.axis),)

    def backward(self, indexes, grad_outputs):
        return (ops.reshape(grad_outputs[0], self._x_shape),)


def squeeze(x, axis=None):
    """Remove axes of length one from the shape of an array.

    Args:
        x (Variable or array): input.
        axis (None, int or tuple of ints): the axes to remove, each of length
            one (negative counts from the last); None removes every axis of
            length one.

    Returns:
        Variable: a view of ``x`` without those axes.

    Raises:
        TypeError: ``axis`` is not None, an int or a tuple of ints.
        InvalidType: an axis is out of range.
        ValueError: an axis is repeated or not of length one.

    >>> import numpy as np
    >>> x = np.zeros((2, 1, 1, 3), np.float32)
    >>> squeeze(x).shape, squeeze(x, axis=1).shape
    ((2, 3), (2, 1, 3))
    """
    if axis is not None:
        axis = check_int_tuple(axis, "axis", "squeeze")
    return Squeeze(axis).apply((x,))[0]
