"""leaky_relu: the leaky rectified linear unit."""

import numbers

import numpy

from dbr.core import as_variable, backend
from dbr.core.utils import force_array, force_type
from dbr.functions._gpu import ACC_PREAMBLE, ElementwiseGrad, kernel
from dbr.functions.math._elementwise import FloatInput

_LEAKY_RELU_ELEMENTWISE = {
    "in_params": "T x, float64 slope",
    "out_params": "T y",
    "operation": "y = x >= (T)0 ? x : (T)((dbr_acc<T>::type)x * (dbr_acc<T>::type)slope)",
    "name": "dbr_leaky_relu",
    "preamble": ACC_PREAMBLE,
}
_LEAKY_RELU_GRAD_ELEMENTWISE = {
    "in_params": "T cond, T gy, float64 slope",
    "out_params": "T gx",
    "operation": "gx = cond < (T)0 ? (T)((dbr_acc<T>::type)gy * (dbr_acc<T>::type)slope) : gy",
    "name": "dbr_leaky_relu_grad",
    "preamble": ACC_PREAMBLE,
}


def negative_part_coefficient(cond, slope, dtype):
    """An array of ``dtype`` that is ``slope`` where ``cond < 0`` and 1 elsewhere.

    Written as ``n * slope + (1 - n)`` with ``n`` the 0/1 indicator, which is
    exact and, on the CPU, much faster than ``where`` over a random mask.
    ``slope`` may be a scalar or an array that broadcasts with ``cond``.
    """
    negative = force_array((cond < 0).astype(dtype))
    coef = force_array(negative * slope, dtype)
    negative -= 1
    coef -= negative
    return coef


class LeakyReLU(FloatInput):
    """Elementwise ``x`` where ``x >= 0`` and ``slope * x`` elsewhere."""

    def __init__(self, slope=0.2):
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise TypeError(f"leaky_relu: expected slope to be a real number, got {slope!r}")
        self.slope = float(slope)

    def forward(self, inputs):
        # The sign of y tells the branch only when slope > 0; otherwise keep x.
        x = inputs[0]
        xp = backend.get_array_module(x)
        slope = self.slope
        if slope > 0:
            self.retain_outputs((0,))
        else:
            self.retain_inputs((0,))
        if xp is not numpy:
            return (kernel(_LEAKY_RELU_ELEMENTWISE)(x, slope),)
        y = xp.empty(x.shape, x.dtype)
        xp.multiply(x, force_type(x.dtype, slope), out=y)
        # max(x, slope * x) for slope <= 1 and min(x, slope * x) above: one pass, no mask.
        (xp.maximum if slope <= 1 else xp.minimum)(x, y, out=y)
        return (y,)

    def backward(self, indexes, grad_outputs):
        if self.slope > 0:
            cond = self.output_data[0]
        else:
            cond = self.get_retained_inputs()[0].array
        if type(cond) is not numpy.ndarray:
            grad = ElementwiseGrad(_LEAKY_RELU_GRAD_ELEMENTWISE, cond, self.slope)
            return grad.apply(grad_outputs)
        coef = negative_part_coefficient(cond, force_type(cond.dtype, self.slope), cond.dtype)
        return (grad_outputs[0] * as_variable(coef),)


def leaky_relu(x, slope=0.2):
    """Leaky rectified linear unit.

    .. math:: y_i = \\begin{cases} x_i & (x_i \\ge 0) \\\\ a x_i & (x_i < 0) \\end{cases}

    where :math:`a` is ``slope``. The gradient is 1 where ``x >= 0`` and
    ``slope`` elsewhere.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        slope (float): the slope :math:`a` of the negative part.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``slope`` is not a real number.

    >>> import numpy as np
    >>> leaky_relu(np.array([[-1.0, 0.0], [2.0, -3.0]], np.float32)).array
    array([[-0.2,  0. ],
           [ 2. , -0.6]], dtype=float32)
    """
    return LeakyReLU(slope).apply((x,))[0]
