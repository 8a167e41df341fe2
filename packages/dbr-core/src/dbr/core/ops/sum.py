"""sum: reduction by addition over axes."""

from dbr.core import type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import force_array
from dbr.core.ops.broadcast import broadcast_to
from dbr.core.ops.cast import cast
from dbr.core.ops.shape import reshape


class Sum(FunctionNode):
    """Sum of the elements over some axes (all by default)."""

    def __init__(self, axis=None, keepdims=False):
        if axis is None:
            self.axis = None
        elif isinstance(axis, int):
            self.axis = (axis,)
        elif isinstance(axis, tuple) and all(isinstance(a, int) for a in axis):
            if len(set(axis)) != len(axis):
                raise ValueError(f"sum: duplicate value in axis {axis}")
            self.axis = axis
        else:
            raise TypeError(
                f"sum: expected axis to be None, an int or a tuple of ints, got {axis!r}"
            )
        self.keepdims = keepdims

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        kind = type_check.eval(in_types[0].dtype).kind
        if kind not in "fiub":
            raise type_check.InvalidType("x.dtype.kind in 'fiub'", f"x.dtype.kind == {kind!r}")
        if self.axis is not None:
            ndim = type_check.eval(in_types[0].ndim)
            for a in self.axis:
                if not -ndim <= a < ndim:
                    raise type_check.InvalidType(f"-x.ndim <= {a} < x.ndim", f"x.ndim == {ndim}")
            if len({a % ndim for a in self.axis}) != len(self.axis):
                raise type_check.InvalidType(f"distinct axes {self.axis}", f"x.ndim == {ndim}")

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        self._x_dtype = x.dtype
        return (force_array(x.sum(axis=self.axis, keepdims=self.keepdims)),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        shape = self._x_shape
        if not self.keepdims and self.axis is not None:
            ndim = len(shape)
            kept = list(gy.shape)
            for a in sorted(a % ndim for a in self.axis):
                kept.insert(a, 1)
            gy = reshape(gy, tuple(kept))
        elif not self.keepdims:
            gy = reshape(gy, (1,) * len(shape))
        # NumPy sums small integers in a wider dtype; the gradient keeps the input's.
        return (cast(broadcast_to(gy, shape), self._x_dtype),)


def sum(x, axis=None, keepdims=False):  # Chainer's name
    """Sum the elements of ``x`` over ``axis``.

    Args:
        x (Variable or array): input.
        axis (None, int or tuple of int): axes to sum over (all if None).
        keepdims (bool): keep the summed axes with size 1.

    Returns:
        Variable: the sums.

    >>> import numpy as np
    >>> sum(np.ones((2, 3), np.float32), axis=1).array
    array([3., 3.], dtype=float32)
    """
    return Sum(axis, keepdims).apply((x,))[0]
