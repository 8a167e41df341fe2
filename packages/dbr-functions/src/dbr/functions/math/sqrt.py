"""sqrt and rsqrt (the reciprocal square root); both differentiate through their output."""

from dbr.core import FunctionNode, backend
from dbr.core.utils import force_array, force_type
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad, check_float_input


class SqrtGrad(UnaryGrad):
    """``gy / (2 y)`` with ``y = sqrt(x)``: the gradient of :func:`sqrt`."""

    def gradient(self, xp, y, gy):
        gx = force_array(y + y)
        xp.divide(gy, gx, out=gx)
        return gx

    def grad_of_input(self, y, gy, ggx):
        return -0.5 * ggx * gy / (y * y)


class Sqrt(UnaryElementwise):
    """Elementwise ``sqrt(x)``; backward uses the output (``1 / (2 y)``)."""

    ufunc = "sqrt"
    retains_output = True
    grad = SqrtGrad


def sqrt(x):
    """Elementwise square root, :math:`y_i = \\sqrt{x_i}`.

    Its gradient :math:`1 / (2 \\sqrt{x_i})` is computed from the output.

    Args:
        x (Variable or array): non-negative input of a floating dtype
            (float16, float32 or float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> sqrt(np.array([4.0, 9.0], np.float32)).array
    array([2., 3.], dtype=float32)
    """
    return Sqrt().apply((x,))[0]


class Rsqrt(FunctionNode):
    """Elementwise ``1 / sqrt(x)``; backward uses the output (``-y**3 / 2``)."""

    def check_type_forward(self, in_types):
        check_float_input(in_types)

    def forward(self, inputs):
        self.retain_outputs((0,))
        x = inputs[0]
        xp = backend.get_array_module(x)
        y = force_array(xp.sqrt(x))
        xp.divide(force_type(y.dtype, 1), y, out=y)
        return (y,)

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return RsqrtGrad().apply((y, grad_outputs[0]))


class RsqrtGrad(UnaryGrad):
    """``-gy * y**3 / 2`` with ``y = 1 / sqrt(x)``: the gradient of :func:`rsqrt`."""

    def gradient(self, xp, y, gy):
        gx = force_array(y * y)
        gx *= y
        gx *= gy
        gx *= force_type(gx.dtype, -0.5)
        return gx

    def grad_of_input(self, y, gy, ggx):
        return -1.5 * ggx * gy * y * y


def rsqrt(x):
    """Elementwise reciprocal of the square root, :math:`y_i = 1 / \\sqrt{x_i}`.

    Its gradient :math:`-y_i^3 / 2` is computed from the output.

    Args:
        x (Variable or array): positive input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> rsqrt(np.array([4.0, 0.25], np.float32)).array
    array([0.5, 2. ], dtype=float32)
    """
    return Rsqrt().apply((x,))[0]
