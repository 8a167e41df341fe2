"""flip, fliplr, flipud: reverse the order of elements along an axis."""

from dbr.core import FunctionNode, type_check
from dbr.functions.array._args import check_axis, check_int


def _flip(x, axis):
    """``x`` viewed with its elements along ``axis`` reversed (Chainer's helper name)."""
    axis %= x.ndim
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


class Flip(FunctionNode):
    """``x`` viewed with the order of its elements along ``axis`` reversed."""

    def __init__(self, axis):
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        check_axis(in_types[0], self.axis)

    def forward(self, inputs):
        return (_flip(inputs[0], self.axis),)

    def backward(self, indexes, grad_outputs):
        return Flip(self.axis).apply(grad_outputs)


class FlipLR(Flip):
    """``x[:, ::-1]``: columns reversed (``x`` of at least two dimensions)."""

    def __init__(self):
        self.axis = 1

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a",))
        type_check.expect(in_types[0].ndim >= 2)


class FlipUD(Flip):
    """``x[::-1]``: rows reversed (``x`` of at least one dimension)."""

    def __init__(self):
        self.axis = 0

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a",))
        type_check.expect(in_types[0].ndim >= 1)


def flip(x, axis):
    """Reverse the order of the elements of an array along an axis.

    ``y[..., i, ...] = x[..., n - 1 - i, ...]`` along ``axis``, ``n`` its length.

    Args:
        x (Variable or array): input of at least one dimension.
        axis (int): the axis to reverse (negative counts from the last).

    Returns:
        Variable: a view of ``x`` in reversed order along ``axis``.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``axis`` is not an axis of ``x``.

    >>> import numpy as np
    >>> flip(np.array([[1, 2], [3, 4]], np.float32), 1).array
    array([[2., 1.],
           [4., 3.]], dtype=float32)
    """
    axis = check_int(axis, "axis", "flip")
    return Flip(axis).apply((x,))[0]


def fliplr(a):
    """Reverse the order of the columns (axis 1) of an array, as ``numpy.fliplr``.

    Args:
        a (Variable or array): input of at least two dimensions.

    Returns:
        Variable: a view of ``a`` with axis 1 reversed.

    Raises:
        InvalidType: ``a`` has fewer than two dimensions.

    >>> import numpy as np
    >>> fliplr(np.array([[1, 2, 3]], np.float32)).array
    array([[3., 2., 1.]], dtype=float32)
    """
    return FlipLR().apply((a,))[0]


def flipud(a):
    """Reverse the order of the rows (axis 0) of an array, as ``numpy.flipud``.

    Args:
        a (Variable or array): input of at least one dimension.

    Returns:
        Variable: a view of ``a`` with axis 0 reversed.

    Raises:
        InvalidType: ``a`` is 0-d.

    >>> import numpy as np
    >>> flipud(np.array([[1], [2]], np.float32)).array
    array([[2.],
           [1.]], dtype=float32)
    """
    return FlipUD().apply((a,))[0]
