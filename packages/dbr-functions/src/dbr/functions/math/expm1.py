"""expm1: ``exp(x) - 1``, accurate for small ``x``."""

from dbr.core import FunctionNode
from dbr.core.utils import force_array, force_type
from dbr.functions.math._elementwise import UnaryElementwise


class Expm1(UnaryElementwise):
    """Elementwise ``exp(x) - 1``; backward uses the output (``exp(x) = y + 1``)."""

    ufunc = "expm1"
    retains_output = True

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return Expm1Grad().apply((y, grad_outputs[0]))


class Expm1Grad(FunctionNode):
    """``gy * (y + 1)`` with ``y = expm1(x)``: the gradient of :func:`expm1`."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, gy = inputs
        gx = force_array(y + force_type(y.dtype, 1))
        gx *= gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        return tuple([ggx * gy if i == 0 else Expm1Grad().apply((y, ggx))[0] for i in indexes])


def expm1(x):
    """Elementwise :math:`y_i = e^{x_i} - 1`, computed without cancellation near 0.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32
            or float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> expm1(np.array([0.0, 1e-10], np.float64)).array
    array([0.e+00, 1.e-10])
    """
    return Expm1().apply((x,))[0]
