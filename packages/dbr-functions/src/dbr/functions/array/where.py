"""where: choose elements from two inputs by a boolean condition."""

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.core.ops import sum_to
from dbr.core.utils import force_array
from dbr.core.variable import Variable, as_array
from dbr.functions.math.maximum import MaskGrad


def _condition_type(condition, like):
    # A light check (type_check.light_types) gets arrays, which are their own types.
    if not isinstance(like, type_check.Expr):
        return condition
    info = type_check.TypeInfo(condition.shape, condition.dtype)
    return type_check.make_variable(info, "condition")


class Where(FunctionNode):
    """``condition ? x : y`` elementwise, with NumPy broadcasting of all three."""

    def __init__(self, condition):
        self.condition = condition

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "y"))
        x_type, y_type = in_types
        c_type = _condition_type(self.condition, x_type)
        type_check.expect(c_type.dtype == numpy.bool_, x_type.dtype == y_type.dtype)
        type_check.expect_broadcast_shapes(c_type.shape, x_type.shape, y_type.shape)

    def forward(self, inputs):
        x, y = inputs
        self._shapes = (x.shape, y.shape)
        xp = get_array_module(x, y)
        return (force_array(xp.where(self.condition, x, y)),)

    def backward(self, indexes, grad_outputs):
        g = grad_outputs[0]
        condition = self.condition
        if condition.shape != g.shape:
            condition = g.xp.broadcast_to(condition, g.shape)
        return tuple(
            [
                sum_to(MaskGrad(condition, invert=i == 1).apply((g,))[0], self._shapes[i])
                for i in indexes
            ]
        )


def where(condition, x, y):
    """Choose elements from ``x`` where ``condition`` is true and from ``y`` elsewhere.

    ``out[i] = x[i] if condition[i] else y[i]``, with ``condition``, ``x``
    and ``y`` broadcast together (NumPy rules). The gradient of ``x`` is the
    output gradient where ``condition`` holds (0 elsewhere) and that of ``y``
    the rest, each summed back to its input's shape; ``condition`` gets none.

    Args:
        condition (Variable or array): a boolean array (a bool or a nested
            list of bools is converted to one).
        x (Variable or array): the values taken where ``condition`` is true.
        y (Variable or array): the values taken where it is false; of ``x``'s
            dtype.

    Returns:
        Variable: of the broadcast shape and ``x``'s dtype.

    >>> import numpy as np
    >>> condition = np.array([[True, False], [False, True]])
    >>> x = np.array([[1, 2], [3, 4]], np.float32)
    >>> where(condition, x, np.zeros((2, 2), np.float32)).array
    array([[1., 0.],
           [0., 4.]], dtype=float32)
    """
    if isinstance(condition, Variable):
        condition = condition.array
    elif not hasattr(condition, "dtype"):
        condition = get_array_module(as_array(x)).asarray(condition)
    return Where(condition).apply((x, y))[0]
