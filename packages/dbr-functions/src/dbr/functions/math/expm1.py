"""expm1: ``exp(x) - 1``, accurate for small ``x``."""

from dbr.core.utils import force_array, force_type
from dbr.functions._docs import fill
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad
from dbr.functions.math._unary_docs import DOCS


class Expm1Grad(UnaryGrad):
    """``gy * (y + 1)`` with ``y = expm1(x)``: the gradient of :func:`expm1`."""

    def gradient(self, xp, y, gy):
        gx = force_array(y + force_type(y.dtype, 1))
        gx *= gy
        return gx

    def grad_of_input(self, y, gy, ggx):
        return ggx * gy


class Expm1(UnaryElementwise):
    """Elementwise ``exp(x) - 1``; backward uses the output (``exp(x) = y + 1``)."""

    ufunc = "expm1"
    retains_output = True
    grad = Expm1Grad


@fill(**DOCS)
def expm1(x):
    """Elementwise :math:`y_i = e^{x_i} - 1`, computed without cancellation near 0.

    {args_float_any_dtype}

    >>> import numpy as np
    >>> expm1(np.array([0.0, 1e-10], np.float64)).array
    array([0.e+00, 1.e-10])
    """
    return Expm1().apply((x,))[0]
