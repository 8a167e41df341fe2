"""square: the elementwise square."""

from dbr.core import FunctionNode
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.math._elementwise import UnaryGrad, check_float_input
from dbr.functions.math._unary_docs import DOCS


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


class SquareGrad(UnaryGrad):
    """``2 * x * gy``: the gradient of :func:`square`, itself differentiable."""

    def gradient(self, xp, x, gy):
        gx = force_array(x * gy)
        gx += gx
        return gx

    def grad_of_input(self, x, gy, ggx):
        return 2.0 * ggx * gy


@fill(**DOCS)
def square(x):
    """Elementwise square, :math:`y_i = x_i^2`.

    {args_float_any_dtype}

    >>> import numpy as np
    >>> square(np.array([-2.0, 3.0], np.float32)).array
    array([4., 9.], dtype=float32)
    """
    return Square().apply((x,))[0]
