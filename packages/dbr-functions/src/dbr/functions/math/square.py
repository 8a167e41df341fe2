"""square: the elementwise square."""

from dbr.core import FunctionNode
from dbr.core.utils import force_array
from dbr.functions.math._elementwise import check_float_input


class Square(FunctionNode):
    """Elementwise ``x * x``."""

    def check_type_forward(self, in_types):
        check_float_input(in_types)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        return (force_array(x * x),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return SquareGrad().apply((x, grad_outputs[0]))


class SquareGrad(FunctionNode):
    """``2 * x * gy``: the gradient of :func:`square`, itself differentiable."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gy = inputs
        gx = force_array(x * gy)
        gx += gx
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        return tuple(
            [2.0 * ggx * gy if i == 0 else SquareGrad().apply((x, ggx))[0] for i in indexes]
        )


def square(x):
    """Elementwise square, :math:`y_i = x_i^2`.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32
            or float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> square(np.array([-2.0, 3.0], np.float32)).array
    array([4., 9.], dtype=float32)
    """
    return Square().apply((x,))[0]
