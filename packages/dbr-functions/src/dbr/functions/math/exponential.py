"""exp and the base-2 and base-10 logarithms (the natural log is :func:`dbr.core.ops.log`)."""

import math

from dbr.functions._docs import fill
from dbr.functions.math._elementwise import UnaryElementwise
from dbr.functions.math._unary_docs import DOCS


class Exp(UnaryElementwise):
    """Elementwise ``exp(x)``; backward uses the output, which is its own derivative."""

    ufunc = "exp"
    retains_output = True

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return (grad_outputs[0] * y,)


@fill(**DOCS)
def exp(x):
    """Elementwise exponential, :math:`y_i = e^{x_i}`.

    {args_float_any_dtype}

    >>> import numpy as np
    >>> exp(np.array([0.0, 1.0])).array.round(4)
    array([1.    , 2.7183])
    """
    return Exp().apply((x,))[0]


class _LogBase(UnaryElementwise):
    """Elementwise logarithm to a fixed base; subclasses name the ufunc and ``ln(base)``."""

    log_of_base = None

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] / (x * self.log_of_base),)


class Log2(_LogBase):
    """Elementwise ``log2(x)``."""

    ufunc = "log2"
    log_of_base = math.log(2.0)


class Log10(_LogBase):
    """Elementwise ``log10(x)``."""

    ufunc = "log10"
    log_of_base = math.log(10.0)


def log2(x):
    """Elementwise base-2 logarithm, :math:`y_i = \\log_2 x_i`.

    Its gradient is :math:`1 / (x_i \\ln 2)`.

    Args:
        x (Variable or array): positive input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> log2(np.array([1.0, 8.0])).array.round(4)
    array([0., 3.])
    """
    return Log2().apply((x,))[0]


def log10(x):
    """Elementwise base-10 logarithm, :math:`y_i = \\log_{10} x_i`.

    Its gradient is :math:`1 / (x_i \\ln 10)`.

    Args:
        x (Variable or array): positive input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> log10(np.array([1.0, 100.0])).array.round(4)
    array([0., 2.])
    """
    return Log10().apply((x,))[0]
