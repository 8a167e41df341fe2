"""diagonal: the diagonal of an array along two of its axes."""

import operator

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module


def _check_int(value, name):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"diagonal: expected {name} to be an int, got {value!r}") from None


class Diagonal(FunctionNode):
    """``x.diagonal(offset, axis1, axis2)``: the diagonal becomes the last axis."""

    def __init__(self, offset, axis1, axis2):
        self.offset = offset
        self.axis1 = axis1
        self.axis2 = axis2

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        ndim = type_check.eval(in_types[0].ndim)
        type_check.expect(in_types[0].ndim >= 2)
        for name in ("axis1", "axis2"):
            axis = getattr(self, name)
            if not -ndim <= axis < ndim:
                raise type_check.InvalidType(
                    f"-x.ndim <= {name} < x.ndim", f"{name} == {axis}, x.ndim == {ndim}"
                )
        if self.axis1 % ndim == self.axis2 % ndim:
            raise type_check.InvalidType(
                "axis1 and axis2 name different axes of x",
                f"axis1 == {self.axis1}, axis2 == {self.axis2}, x.ndim == {ndim}",
            )

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (x.diagonal(self.offset, self.axis1, self.axis2).copy(),)

    def backward(self, indexes, grad_outputs):
        grad = DiagonalGrad(self._x_shape, self.offset, self.axis1, self.axis2)
        return grad.apply(grad_outputs)


class DiagonalGrad(FunctionNode):
    """The gradient of :class:`Diagonal`: zeros of the input's shape, ``gy`` on the diagonal."""

    def __init__(self, x_shape, offset, axis1, axis2):
        self.x_shape = x_shape
        self.offset = offset
        self.axis1 = axis1
        self.axis2 = axis2

    def forward(self, inputs):
        gy = inputs[0]
        xp = get_array_module(gy)
        gx = xp.zeros(self.x_shape, gy.dtype)
        # With the two axes moved last, the diagonal is indexed by two adjacent
        # index arrays, so the selection keeps diagonal()'s layout (diagonal last).
        view = xp.moveaxis(gx, (self.axis1, self.axis2), (-2, -1))
        n = gy.shape[-1]
        rows = xp.arange(n) + max(-self.offset, 0)
        cols = xp.arange(n) + max(self.offset, 0)
        view[..., rows, cols] = gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        return Diagonal(self.offset, self.axis1, self.axis2).apply(grad_outputs)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """Take the diagonal of ``x`` along ``axis1`` and ``axis2``, as :func:`numpy.diagonal`.

    ``y[..., i] = x[..., i, i + offset, ...]`` with the two axes removed and
    the diagonal appended as the last axis. The gradient puts the output
    gradient back on the diagonal of zeros.

    Args:
        x (Variable or array): input with at least two axes.
        offset (int): the diagonal's offset from the main one: positive above
            it (towards larger ``axis2`` indexes), negative below.
        axis1 (int): the first axis of the 2-D sub-arrays.
        axis2 (int): the second axis; it must differ from ``axis1``.

    Returns:
        Variable: of ``x``'s dtype, with ``x.ndim - 1`` axes, the last of the
        diagonal's length.

    >>> import numpy as np
    >>> diagonal(np.arange(9, dtype=np.float32).reshape(3, 3), offset=1).array
    array([1., 5.], dtype=float32)
    """
    offset = _check_int(offset, "offset")
    axis1 = _check_int(axis1, "axis1")
    axis2 = _check_int(axis2, "axis2")
    return Diagonal(offset, axis1, axis2).apply((x,))[0]
