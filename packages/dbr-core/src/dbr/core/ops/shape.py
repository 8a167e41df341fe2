"""reshape and transpose: views of an array with other axes."""

from dbr.core import type_check
from dbr.core.function_node import FunctionNode
from dbr.core.variable import as_variable


class Reshape(FunctionNode):
    """Give an array a new shape with the same number of elements."""

    def __init__(self, shape):
        self.shape = shape

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        size = type_check.eval(in_types[0].size)
        known = 1
        unknown = 0
        for n in self.shape:
            if n == -1:
                unknown += 1
            else:
                known *= n
        ok = unknown <= 1 and (known == size if not unknown else known and size % known == 0)
        if not ok:
            raise type_check.InvalidType(
                f"x.size compatible with shape {self.shape}",
                f"x.shape == {type_check.eval(in_types[0].shape)}",
            )

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (x.reshape(self.shape),)

    def backward(self, indexes, grad_outputs):
        return (reshape(grad_outputs[0], self._x_shape),)


def reshape(x, shape):
    """Return ``x`` with a new shape (one axis may be ``-1``, inferred).

    Args:
        x (Variable or array): input.
        shape (tuple of int): the new shape, with as many elements as ``x``.

    Returns:
        Variable: the reshaped input (a view where the backend allows).

    >>> import numpy as np
    >>> reshape(np.arange(6, dtype=np.float32), (2, 3)).shape
    (2, 3)
    """
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if getattr(x, "shape", None) == shape:
        return as_variable(x)
    return Reshape(shape).apply((x,))[0]


class Transpose(FunctionNode):
    """Permute the axes of an array."""

    def __init__(self, axes=None):
        self.axes = axes

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        axes = self.axes
        if axes is None:
            return
        ndim = type_check.eval(in_types[0].ndim)
        if sorted(a % ndim if -ndim <= a < ndim else a for a in axes) != list(range(ndim)):
            raise type_check.InvalidType(
                f"axes {axes} a permutation of range(x.ndim)", f"x.ndim == {ndim}"
            )

    def forward(self, inputs):
        return (inputs[0].transpose(self.axes),)

    def backward(self, indexes, grad_outputs):
        axes = self.axes
        if axes is None:
            return (transpose(grad_outputs[0]),)
        ndim = len(axes)
        inverse = [0] * ndim
        for i, a in enumerate(axes):
            inverse[a % ndim] = i
        return (transpose(grad_outputs[0], tuple(inverse)),)


def transpose(x, axes=None):
    """Permute the axes of ``x`` (reverse them if ``axes`` is None).

    Args:
        x (Variable or array): input.
        axes (tuple of int or None): a permutation of ``range(x.ndim)``.

    Returns:
        Variable: the transposed input.

    >>> import numpy as np
    >>> transpose(np.zeros((2, 3), np.float32)).shape
    (3, 2)
    """
    return Transpose(None if axes is None else tuple(axes)).apply((x,))[0]
