"""concat: join arrays along an existing axis."""

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array import split_axis as _split_axis
from dbr.functions.array._args import check_axis, check_int


class Concat(FunctionNode):
    """Concatenation of arrays of one dtype whose shapes agree except along ``axis``."""

    def __init__(self, axis=1):
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() > 0)
        type_check.argname(in_types, [f"xs[{i}]" for i in range(len(in_types))])
        x0 = in_types[0]
        check_axis(x0, self.axis)
        shape0 = type_check.eval(x0.shape)
        dtype0 = type_check.eval(x0.dtype)
        axis = self.axis % len(shape0)
        head, tail = shape0[:axis], shape0[axis + 1 :]
        for x in in_types[1:]:
            shape = type_check.eval(x.shape)
            if (
                type_check.eval(x.dtype) == dtype0
                and len(shape) == len(shape0)
                and shape[:axis] == head
                and shape[axis + 1 :] == tail
            ):
                continue
            # Only a failing input builds the conditions that name it in the message.
            type_check.expect(x.dtype == x0.dtype, x.ndim == x0.ndim)
            for d in range(len(shape0)):
                if d != axis:
                    type_check.expect(x.shape[d] == x0.shape[d])

    def forward(self, inputs):
        axis = self.axis
        x0 = inputs[0]
        sections = []
        end = 0
        for x in inputs[:-1]:
            end += x.shape[axis]
            sections.append(end)
        self._sections = sections
        xp = get_array_module(x0)
        return (xp.concatenate(inputs, axis=axis),)

    def backward(self, indexes, grad_outputs):
        if len(self.inputs) == 1:
            return grad_outputs
        gxs = _split_axis.SplitAxis(self._sections, self.axis).apply(grad_outputs)
        return tuple([gxs[i] for i in indexes])


def concat(xs, axis=1):
    """Concatenate arrays along an axis.

    ``y = [xs[0] | xs[1] | ...]`` along ``axis``: the inputs must have one
    dtype and one number of dimensions, and equal lengths along every other
    axis. The gradient of each input is its slice of the output gradient.

    Args:
        xs (list or tuple of Variable or array): the arrays to join (at least
            one), each ``(s_1, ..., s_axis_i, ..., s_N)``-shaped.
        axis (int): the axis to join along (negative counts from the last).

    Returns:
        Variable: of shape ``(s_1, ..., sum_i s_axis_i, ..., s_N)``.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``xs`` is empty, or the inputs differ in dtype, number of
            dimensions or shape off ``axis``, or ``axis`` is not one of their axes.

    >>> import numpy as np
    >>> a = np.zeros((2, 1), np.float32)
    >>> b = np.ones((2, 2), np.float32)
    >>> concat((a, b)).array
    array([[0., 1., 1.],
           [0., 1., 1.]], dtype=float32)
    """
    axis = check_int(axis, "axis", "concat")
    return Concat(axis).apply(xs)[0]
