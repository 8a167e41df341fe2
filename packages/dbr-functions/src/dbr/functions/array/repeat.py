"""repeat: repeat the elements of an array."""

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import check_axis, check_int, check_int_tuple

_float16 = numpy.dtype(numpy.float16)


class Repeat(FunctionNode):
    """``numpy.repeat(x, repeats, axis)``; the gradient sums the copies of each element."""

    def __init__(self, repeats, axis=None):
        self.repeats = repeats
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        n = len(self.repeats)
        if self.axis is None:
            if n != 1:
                type_check.expect(x.size == n)
        else:
            check_axis(x, self.axis)
            if n != 1:
                type_check.expect(x.shape[self.axis] == n)

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        repeats = self.repeats
        repeats = repeats[0] if len(repeats) == 1 else list(repeats)
        return (get_array_module(x).repeat(x, repeats, self.axis),)

    def backward(self, indexes, grad_outputs):
        return RepeatGrad(self.repeats, self.axis, self._x_shape).apply(grad_outputs)


class RepeatGrad(FunctionNode):
    """The gradient of :class:`Repeat`: the copies of each element summed; its gradient repeats."""

    def __init__(self, repeats, axis, x_shape):
        self.repeats = repeats
        self.axis = axis
        self._x_shape = x_shape

    def forward(self, inputs):
        gy = inputs[0]
        xp = get_array_module(gy)
        if self.axis is None:
            shape = (int(numpy.prod(self._x_shape)),)
            axis = 0
        else:
            shape = self._x_shape
            axis = self.axis % len(shape)
        acc = numpy.float32 if gy.dtype == _float16 else gy.dtype
        if len(self.repeats) == 1:
            split = shape[:axis] + (shape[axis], self.repeats[0]) + shape[axis + 1 :]
            gx = gy.reshape(split).sum(axis=axis + 1, dtype=acc)
        else:
            owner = numpy.repeat(numpy.arange(len(self.repeats)), self.repeats)
            gx = xp.zeros(shape, acc)
            index = (slice(None),) * axis + (xp.asarray(owner),)
            xp.add.at(gx, index, gy.astype(acc, copy=False))
        return (gx.astype(gy.dtype, copy=False).reshape(self._x_shape),)

    def backward(self, indexes, grad_outputs):
        return Repeat(self.repeats, self.axis).apply(grad_outputs)


def repeat(x, repeats, axis=None):
    """Repeat each element of an array, as ``numpy.repeat``.

    Args:
        x (Variable or array): input.
        repeats (int or tuple of ints): how many times each element is
            repeated, each non-negative (a bool counts as 0 or 1, as in
            NumPy and Chainer); a tuple gives one count per element
            along ``axis`` (per element of the flattened ``x`` if ``axis`` is
            None), or a single count for all.
        axis (int or None): the axis along which to repeat (negative counts
            from the last); None repeats the elements of the flattened input
            and returns a 1-D array.

    Returns:
        Variable: of ``x``'s dtype; the gradient of each element of ``x`` is
        the sum of the gradients of its copies.

    Raises:
        TypeError: ``repeats`` or ``axis`` has the wrong type.
        ValueError: an entry of ``repeats`` is negative.
        InvalidType: ``axis`` is not an axis of ``x``, or ``repeats`` has the
            wrong length.

    >>> import numpy as np
    >>> repeat(np.array([[1, 2], [3, 4]], np.float32), (1, 2), axis=0).array
    array([[1., 2.],
           [3., 4.],
           [3., 4.]], dtype=float32)
    """
    if isinstance(repeats, (tuple, list)):
        repeats = tuple([int(r) if isinstance(r, bool) else r for r in repeats])
    elif isinstance(repeats, bool):
        repeats = int(repeats)
    repeats = check_int_tuple(repeats, "repeats", "repeat")
    if any(r < 0 for r in repeats):
        raise ValueError(f"repeat: expected every element of repeats to be >= 0, got {repeats}")
    if axis is not None:
        axis = check_int(axis, "axis", "repeat")
    return Repeat(repeats, axis).apply((x,))[0]
