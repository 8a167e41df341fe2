"""rollaxis: roll one axis of an array backwards to a given position."""

from dbr.core import FunctionNode, ops, type_check
from dbr.functions.array._args import check_axis, check_int, inverse_permutation


class Rollaxis(FunctionNode):
    """``x`` viewed with axis ``axis`` moved to lie before axis ``start``."""

    def __init__(self, axis, start=0):
        self.axis = axis
        self.start = start

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        check_axis(x, self.axis)
        type_check.expect(-x.ndim <= self.start, x.ndim >= self.start)

    def forward(self, inputs):
        x = inputs[0]
        ndim = x.ndim
        axis = self.axis % ndim
        start = self.start + ndim if self.start < 0 else self.start
        if axis < start:
            start -= 1
        perm = [a for a in range(ndim) if a != axis]
        perm.insert(start, axis)
        self._perm = tuple(perm)
        return (x.transpose(perm),)

    def backward(self, indexes, grad_outputs):
        return (ops.transpose(grad_outputs[0], inverse_permutation(self._perm)),)


def rollaxis(x, axis, start=0):
    """Roll an axis backwards until it lies before another, as ``numpy.rollaxis``.

    Args:
        x (Variable or array): input.
        axis (int): the axis to roll (negative counts from the last).
        start (int): the axis is rolled until it lies before this position,
            in ``[-x.ndim, x.ndim]`` (negative counts from the end).

    Returns:
        Variable: a view of ``x`` with its axes permuted.

    Raises:
        TypeError: ``axis`` or ``start`` is not an int.
        InvalidType: ``axis`` or ``start`` is out of range.

    >>> import numpy as np
    >>> rollaxis(np.zeros((2, 3, 4), np.float32), 2).shape
    (4, 2, 3)
    """
    axis = check_int(axis, "axis", "rollaxis")
    start = check_int(start, "start", "rollaxis")
    return Rollaxis(axis, start).apply((x,))[0]
