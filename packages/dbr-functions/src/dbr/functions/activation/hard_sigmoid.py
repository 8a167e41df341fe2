"""hard_sigmoid: a piecewise linear approximation of the sigmoid."""

import numpy

from dbr.core import as_variable, backend
from dbr.core.utils import force_array, force_type
from dbr.functions._docs import fill
from dbr.functions._gpu import ACC_PREAMBLE, ElementwiseGrad, kernel
from dbr.functions.activation.sigmoid import DOCS
from dbr.functions.math._elementwise import FloatInput

_HARD_SIGMOID_ELEMENTWISE = {
    "in_params": "T x",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A; A t = (A)x * (A)0.2 + (A)0.5;"
        "y = (T)(t < (A)0 ? (A)0 : (t > (A)1 ? (A)1 : t))"
    ),
    "name": "dbr_hard_sigmoid",
    "preamble": ACC_PREAMBLE,
}
_HARD_SIGMOID_GRAD_ELEMENTWISE = {
    "in_params": "T x, T gy",
    "out_params": "T gx",
    "operation": (
        "typedef dbr_acc<T>::type A;gx = x > (T)-2.5 && x < (T)2.5 ? (T)((A)gy * (A)0.2) : (T)0"
    ),
    "name": "dbr_hard_sigmoid_grad",
    "preamble": ACC_PREAMBLE,
}


class HardSigmoid(FloatInput):
    """Elementwise ``clip(0.2 * x + 0.5, 0, 1)``."""

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        self.retain_inputs((0,))
        if xp is not numpy:
            return (kernel(_HARD_SIGMOID_ELEMENTWISE)(x),)
        dtype = x.dtype
        y = xp.empty(x.shape, dtype)
        xp.multiply(x, force_type(dtype, 0.2), out=y)
        y += force_type(dtype, 0.5)
        xp.clip(y, force_type(dtype, 0), force_type(dtype, 1), out=y)
        return (y,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array
        if type(x) is not numpy.ndarray:
            return ElementwiseGrad(_HARD_SIGMOID_GRAD_ELEMENTWISE, x).apply(grad_outputs)
        dtype = x.dtype
        inside = x > force_type(dtype, -2.5)
        inside &= x < force_type(dtype, 2.5)
        coef = force_array(inside.astype(dtype))
        coef *= force_type(dtype, 0.2)
        return (grad_outputs[0] * as_variable(coef),)


@fill(**DOCS)
def hard_sigmoid(x):
    """Hard sigmoid, a piecewise linear approximation of the sigmoid.

    .. math::
        y_i = \\begin{cases}
            0 & (x_i < -2.5) \\\\
            0.2 x_i + 0.5 & (-2.5 \\le x_i \\le 2.5) \\\\
            1 & (2.5 < x_i)
        \\end{cases}

    The gradient is 0.2 where ``-2.5 < x < 2.5`` and 0 elsewhere.

    {args_unit_interval}

    >>> import numpy as np
    >>> hard_sigmoid(np.array([-3.0, 0.0, 1.0, 3.0], np.float32)).array
    array([0. , 0.5, 0.7, 1. ], dtype=float32)
    """
    return HardSigmoid().apply((x,))[0]
