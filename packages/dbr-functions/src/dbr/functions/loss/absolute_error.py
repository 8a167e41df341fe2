"""absolute_error: the elementwise absolute difference ``|x0 - x1|``."""

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array


class AbsoluteError(FunctionNode):
    """Elementwise ``|x0 - x1|``; the gradient where ``x0 == x1`` is 0."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x0", "x1"))
        x0, x1 = in_types
        type_check.expect(x0.dtype.kind == "f", x0.dtype == x1.dtype, x0.shape == x1.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x0, x1 = inputs
        diff = force_array(x0 - x1)
        return (backend.get_array_module(diff).abs(diff, out=diff),)

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        sign = x0.xp.sign(x0.array - x1.array)
        gx0 = grad_outputs[0] * sign
        return tuple([gx0 if i == 0 else -gx0 for i in indexes])


def absolute_error(x0, x1):
    """Elementwise absolute error ``|x0 - x1|``.

    The gradient where ``x0 == x1`` is taken to be 0.

    Args:
        x0 (Variable or array): float16, float32 or float64 array.
        x1 (Variable or array): an array of the same shape and dtype as ``x0``.

    Returns:
        Variable: ``|x0 - x1|``, of ``x0``'s shape and dtype.

    >>> import numpy as np
    >>> x0 = np.array([1.0, 2.0, 3.0], np.float32)
    >>> x1 = np.array([2.0, 2.0, 0.5], np.float32)
    >>> absolute_error(x0, x1).array
    array([1. , 0. , 2.5], dtype=float32)
    """
    return AbsoluteError().apply((x0, x1))[0]
