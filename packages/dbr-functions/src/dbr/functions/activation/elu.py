"""elu: the exponential linear unit."""

import numbers

import numpy

from dbr.core import FunctionNode, as_variable, backend
from dbr.core.utils import force_array, force_type
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.math._elementwise import FloatInput

_ELU_ELEMENTWISE = {
    "in_params": "T x, float64 alpha",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A; A v = x;y = v > (A)0 ? x : (T)((A)alpha * expm1(v))"
    ),
    "name": "dbr_elu",
    "preamble": ACC_PREAMBLE,
}
_ELU_GRAD_ELEMENTWISE = {
    "in_params": "T y, bool positive, T gy, float64 alpha",
    "out_params": "T gx",
    "operation": (
        "typedef dbr_acc<T>::type A;gx = positive ? gy : (T)(((A)y + (A)alpha) * (A)gy)"
    ),
    "name": "dbr_elu_grad",
    "preamble": ACC_PREAMBLE,
}


def check_alpha(alpha, who):
    """Return ``alpha`` as a float, or raise a TypeError naming ``who``."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"{who}: expected alpha to be a real number, got {alpha!r}")
    return float(alpha)


class ELU(FloatInput):
    """Elementwise ``x`` where ``x > 0`` and ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha=1.0):
        self.alpha = check_alpha(alpha, "elu")

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        # With alpha >= 0, y > 0 exactly where x > 0; otherwise backward needs x.
        if self.alpha < 0:
            self.retain_inputs((0,))
        if xp is not numpy:
            return (kernel(_ELU_ELEMENTWISE)(x, self.alpha),)
        dtype = x.dtype
        zero = force_type(dtype, 0)
        # expm1 of min(x, 0) never overflows and vanishes where x > 0, so the
        # two branches add up without a mask.
        y = force_array(xp.expm1(xp.minimum(x, zero)), dtype)
        y *= force_type(dtype, self.alpha)
        y += xp.maximum(x, zero)
        return (y,)

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        cond = y if self.alpha >= 0 else self.get_retained_inputs()[0]
        positive = cond.array > 0
        return ELUGrad(self.alpha, positive).apply((y, grad_outputs[0]))


class ELUGrad(FunctionNode):
    """``gy * (1 if x > 0 else y + alpha)`` from elu's output ``y`` and its gradient ``gy``.

    ``y + alpha`` is ``alpha * exp(x)``, the derivative of the negative branch.

    Args:
        alpha (float): elu's ``alpha``.
        positive: the boolean array ``x > 0``.
    """

    def __init__(self, alpha, positive):
        self.alpha = alpha
        self.positive = positive

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, gy = inputs
        if type(y) is not numpy.ndarray:
            return (kernel(_ELU_GRAD_ELEMENTWISE)(y, self.positive, gy, self.alpha),)
        gx = _derivative(y, self.positive, self.alpha)
        gx *= gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                negative = force_array((~self.positive).astype(y.dtype))
                ret.append(ggx * gy * as_variable(negative))
            else:
                ret.append(ELUGrad(self.alpha, self.positive).apply((y, ggx))[0])
        return tuple(ret)


def _derivative(y, positive, alpha):
    """1 where ``positive``, ``y + alpha`` elsewhere, as ``p + (1 - p) * (y + alpha)``."""
    dtype = y.dtype
    p = positive.astype(dtype)
    d = y + force_type(dtype, alpha)
    d *= 1 - p
    d += p
    return force_array(d, dtype)


def elu(x, alpha=1.0):
    """Exponential linear unit.

    .. math::
        y_i = \\begin{cases}
            x_i & (x_i > 0) \\\\
            \\alpha (\\exp(x_i) - 1) & (x_i \\le 0)
        \\end{cases}

    The gradient is 1 where ``x > 0`` and :math:`\\alpha \\exp(x_i)` elsewhere.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        alpha (float): the coefficient :math:`\\alpha` of the negative part.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``alpha`` is not a real number.

    >>> import numpy as np
    >>> elu(np.array([-1.0, 0.0, 2.0], np.float32)).array.round(4)
    array([-0.6321,  0.    ,  2.    ], dtype=float32)
    """
    return ELU(alpha).apply((x,))[0]
