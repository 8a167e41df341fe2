"""log1p: ``log(1 + x)``, accurate for small ``x``."""

from dbr.core.utils import force_array, force_type
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad


class Log1pGrad(UnaryGrad):
    """``gy / (1 + x)``: the gradient of :func:`log1p`, itself differentiable."""

    def gradient(self, xp, x, gy):
        gx = force_array(x + force_type(x.dtype, 1))
        xp.divide(gy, gx, out=gx)
        return gx

    def grad_of_input(self, x, gy, ggx):
        w = x + 1.0
        return -ggx * gy / (w * w)


class Log1p(UnaryElementwise):
    """Elementwise ``log(1 + x)``."""

    ufunc = "log1p"
    grad = Log1pGrad


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
