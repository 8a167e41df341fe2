"""swapaxes: interchange two axes of an array."""

from dbr.core import FunctionNode, type_check
from dbr.functions.array._args import check_axis, check_int


class Swapaxes(FunctionNode):
    """``x`` viewed with axes ``axis1`` and ``axis2`` interchanged; its own inverse."""

    def __init__(self, axis1, axis2):
        self.axis1 = axis1
        self.axis2 = axis2

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        check_axis(x, self.axis1)
        check_axis(x, self.axis2)

    def forward(self, inputs):
        return (inputs[0].swapaxes(self.axis1, self.axis2),)

    def backward(self, indexes, grad_outputs):
        return Swapaxes(self.axis1, self.axis2).apply(grad_outputs)


def swapaxes(x, axis1, axis2):
    """Interchange two axes of an array, as ``numpy.swapaxes``.

    Args:
        x (Variable or array): input.
        axis1 (int): the first axis (negative counts from the last).
        axis2 (int): the second axis.

    Returns:
        Variable: a view of ``x`` with the two axes interchanged.

    Raises:
        TypeError: ``axis1`` or ``axis2`` is not an int.
        InvalidType: ``axis1`` or ``axis2`` is not an axis of ``x``.

    >>> import numpy as np
    >>> swapaxes(np.zeros((2, 3, 4), np.float32), 0, 2).shape
    (4, 3, 2)
    """
    axis1 = check_int(axis1, "axis1", "swapaxes")
    axis2 = check_int(axis2, "axis2", "swapaxes")
    return Swapaxes(axis1, axis2).apply((x,))[0]
