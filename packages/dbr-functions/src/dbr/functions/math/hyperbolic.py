"""Hyperbolic functions: sinh, cosh and the inverse hyperbolic tangent arctanh."""

from dbr.functions._docs import fill
from dbr.functions.math._elementwise import UnaryElementwise
from dbr.functions.math._unary_docs import DOCS


class Sinh(UnaryElementwise):
    """Elementwise ``sinh(x)``."""

    ufunc = "sinh"

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] * cosh(x),)


@fill(**DOCS)
def sinh(x):
    """Elementwise hyperbolic sine, :math:`y_i = \\sinh x_i`.

    {args_float_any_dtype}

    >>> import numpy as np
    >>> sinh(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 1.1752])
    """
    return Sinh().apply((x,))[0]


class Cosh(UnaryElementwise):
    """Elementwise ``cosh(x)``."""

    ufunc = "cosh"

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] * sinh(x),)


@fill(**DOCS)
def cosh(x):
    """Elementwise hyperbolic cosine, :math:`y_i = \\cosh x_i`.

    {args_float}

    >>> import numpy as np
    >>> cosh(np.array([0.0, 1.0])).array.round(4)
    array([1.    , 1.5431])
    """
    return Cosh().apply((x,))[0]


class Arctanh(UnaryElementwise):
    """Elementwise ``arctanh(x)``."""

    ufunc = "arctanh"

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] / (1.0 - x * x),)


@fill(**DOCS)
def arctanh(x):
    """Elementwise inverse hyperbolic tangent, :math:`y_i = \\tanh^{-1} x_i`.

    Defined for :math:`-1 < x_i < 1`; its gradient is :math:`1 / (1 - x_i^2)`.

    {args_float}

    >>> import numpy as np
    >>> arctanh(np.array([0.0, 0.5])).array.round(4)
    array([0.    , 0.5493])
    """
    return Arctanh().apply((x,))[0]
