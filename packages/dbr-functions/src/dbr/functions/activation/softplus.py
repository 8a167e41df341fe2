"""softplus: a smooth approximation of relu."""

import numbers

import numpy

from dbr.core import backend
from dbr.core.utils import force_array, force_type
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.activation.sigmoid import sigmoid
from dbr.functions.math._elementwise import FloatInput

# log(1 + exp(t)) == max(t, 0) + log1p(exp(-|t|)), which never overflows.
_SOFTPLUS_ELEMENTWISE = {
    "in_params": "T x, float64 beta",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A; A t = (A)x * (A)beta;"
        "y = (T)(((t > (A)0 ? t : (A)0) + log1p(exp(-fabs(t)))) / (A)beta)"
    ),
    "name": "dbr_softplus",
    "preamble": ACC_PREAMBLE,
}


class Softplus(FloatInput):
    """Elementwise ``log(1 + exp(beta * x)) / beta``."""

    def __init__(self, beta=1.0):
        if (
            isinstance(beta, backend.get_array_types())
            and beta.ndim == 0
            and beta.dtype.kind in "iuf"
        ):
            beta = beta.item()
        if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
            raise TypeError(f"softplus: expected beta to be a real number, got {beta!r}")
        if beta == 0:
            raise ValueError("softplus: expected beta to be nonzero, got 0")
        self.beta = float(beta)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = backend.get_array_module(x)
        if xp is not numpy:
            return (kernel(_SOFTPLUS_ELEMENTWISE)(x, self.beta),)
        dtype = x.dtype
        bx = force_array(x * force_type(dtype, self.beta), dtype)
        # logaddexp(0, t) == log(1 + exp(t)) without overflow for large t.
        y = force_array(xp.logaddexp(force_type(dtype, 0), bx), dtype)
        y *= force_type(dtype, 1.0 / self.beta)
        return (y,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] * sigmoid(x * self.beta),)


def softplus(x, beta=1.0):
    """Softplus, a smooth approximation of relu.

    .. math:: y_i = \\frac{1}{\\beta} \\log\\left(1 + \\exp(\\beta x_i)\\right)

    Larger ``beta`` brings it closer to ``max(x, 0)``. The gradient is
    :math:`\\mathrm{sigmoid}(\\beta x_i)`.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        beta (float or 0-d array): the sharpness :math:`\\beta`, a nonzero
            real number.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``beta`` is not a real number.
        ValueError: ``beta`` is 0.

    >>> import numpy as np
    >>> softplus(np.array([-1.0, 0.0, 2.0], np.float32)).array.round(4)
    array([0.3133, 0.6931, 2.1269], dtype=float32)
    """
    return Softplus(beta).apply((x,))[0]
