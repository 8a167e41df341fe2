"""log1p: ``log(1 + x)``, accurate for small ``x``."""

from dbr.core import FunctionNode, backend
from dbr.core.utils import force_array, force_type
from dbr.functions.math._elementwise import UnaryElementwise


class Log1p(UnaryElementwise):
    """Elementwise ``log(1 + x)``."""

    ufunc = "log1p"

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return Log1pGrad().apply((x, grad_outputs[0]))


class Log1pGrad(FunctionNode):
    """``gy / (1 + x)``: the gradient of :func:`log1p`, itself differentiable."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gy = inputs
        gx = force_array(x + force_type(x.dtype, 1))
        backend.get_array_module(x).divide(gy, gx, out=gx)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                w = x + 1.0
                ret.append(-ggx * gy / (w * w))
            else:
                ret.append(Log1pGrad().apply((x, ggx))[0])
        return tuple(ret)


def log1p(x):
    """Elementwise :math:`y_i = \\ln(1 + x_i)`, computed without cancellation near 0.

    Its gradient is :math:`1 / (1 + x_i)`.

    Args:
        x (Variable or array): input greater than -1, of a floating dtype, any
            shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> log1p(np.array([0.0, 1e-10], np.float64)).array
    array([0.e+00, 1.e-10])
    """
    return Log1p().apply((x,))[0]
