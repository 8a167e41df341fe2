"""Error functions: erf, erfc, erfcx, erfinv, erfcinv.

Forward values come from SciPy on the CPU (the ``special`` extra) and from
``cupyx.scipy.special`` on the GPU. Every gradient is again built from
FunctionNodes, so each function can be differentiated any number of times.
"""

import math

from dbr.core import FunctionNode
from dbr.core.utils import force_array, force_type
from dbr.functions.math._special import UnarySpecialFunction, array_module

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


class ExpSquareGrad(FunctionNode):
    """``coeff * exp(k * v ** 2) * gy``: the gradient shared by the Gaussian-type functions.

    ``v`` is the input of the function being differentiated (erf, erfc, ndtr,
    with ``k < 0``) or its output (erfinv, erfcinv, ndtri, with ``k > 0``).
    Its own gradients are ``2 k v`` times its output (in ``v``) and the same
    node applied to the incoming gradient (in ``gy``).

    Args:
        coeff (float): the constant factor.
        k (float): the factor of ``v ** 2`` in the exponent.
    """

    def __init__(self, coeff, k):
        self.coeff = coeff
        self.k = k

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        v, gy = inputs
        xp = array_module(v)
        g = force_array(xp.square(v))
        g *= force_type(g.dtype, self.k)
        xp.exp(g, out=g)
        g *= force_type(g.dtype, self.coeff)
        g *= gy
        return (g,)

    def backward(self, indexes, grad_outputs):
        (v,) = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                (out,) = self.get_retained_outputs()
                ret.append(ggx * out * v * (2.0 * self.k))
            else:
                ret.append(ExpSquareGrad(self.coeff, self.k).apply((v, ggx))[0])
        return tuple(ret)


class Erf(UnarySpecialFunction):
    """The error function; see :func:`erf`."""

    name = "erf"
    special_name = "erf"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return ExpSquareGrad(_TWO_OVER_SQRT_PI, -1.0).apply((x, grad_outputs[0]))


class Erfc(UnarySpecialFunction):
    """The complementary error function; see :func:`erfc`."""

    name = "erfc"
    special_name = "erfc"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return ExpSquareGrad(-_TWO_OVER_SQRT_PI, -1.0).apply((x, grad_outputs[0]))


class Erfcx(UnarySpecialFunction):
    """The scaled complementary error function; see :func:`erfcx`."""

    name = "erfcx"
    special_name = "erfcx"

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        (y,) = self.get_retained_outputs()
        return ErfcxGrad().apply((x, y, grad_outputs[0]))


class ErfcxGrad(FunctionNode):
    """``(2 x y - 2 / sqrt(pi)) * gy`` for ``y = erfcx(x)``: the gradient of erfcx."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, y, gy = inputs
        g = force_array(x * y)
        g *= force_type(g.dtype, 2.0)
        g -= force_type(g.dtype, _TWO_OVER_SQRT_PI)
        g *= gy
        return (g,)

    def backward(self, indexes, grad_outputs):
        x, y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(ggx * gy * y * 2.0)
            elif i == 1:
                ret.append(ggx * gy * x * 2.0)
            else:
                ret.append(ErfcxGrad().apply((x, y, ggx))[0])
        return tuple(ret)


class ErfInv(UnarySpecialFunction):
    """The inverse error function; see :func:`erfinv`."""

    name = "erfinv"
    special_name = "erfinv"

    def forward(self, inputs):
        self.retain_outputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return ExpSquareGrad(_SQRT_PI_OVER_TWO, 1.0).apply((y, grad_outputs[0]))


class ErfcInv(UnarySpecialFunction):
    """The inverse complementary error function; see :func:`erfcinv`."""

    name = "erfcinv"
    special_name = "erfcinv"

    def forward(self, inputs):
        self.retain_outputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return ExpSquareGrad(-_SQRT_PI_OVER_TWO, 1.0).apply((y, grad_outputs[0]))


def erf(x):
    """Elementwise error function.

    .. math::
        \\operatorname{erf}(x) = \\frac{2}{\\sqrt{\\pi}} \\int_0^x e^{-t^2} dt,
        \\qquad \\operatorname{erf}'(x) = \\frac{2}{\\sqrt{\\pi}} e^{-x^2}.

    Needs SciPy on the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``erf(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> erf(np.array([0.0, 1.0], np.float32)).array.round(4)
    array([0.    , 0.8427], dtype=float32)
    """
    return Erf().apply((x,))[0]


def erfc(x):
    """Elementwise complementary error function ``erfc(x) = 1 - erf(x)``.

    Accurate for large ``x``, where ``1 - erf(x)`` would cancel. Its
    derivative is :math:`-\\frac{2}{\\sqrt{\\pi}} e^{-x^2}`. Needs SciPy on the
    CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``erfc(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> erfc(np.array([0.0, 1.0], np.float32)).array.round(4)
    array([1.    , 0.1573], dtype=float32)
    """
    return Erfc().apply((x,))[0]


def erfcx(x):
    """Elementwise scaled complementary error function ``erfcx(x) = exp(x ** 2) * erfc(x)``.

    Stays finite where ``erfc`` underflows (large positive ``x``). Its
    derivative is :math:`2 x \\operatorname{erfcx}(x) - \\frac{2}{\\sqrt{\\pi}}`.
    Needs SciPy on the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``erfcx(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> erfcx(np.array([0.0, 10.0], np.float32)).array.round(4)
    array([1.    , 0.0561], dtype=float32)
    """
    return Erfcx().apply((x,))[0]


def erfinv(x):
    """Elementwise inverse error function: ``erf(erfinv(x)) == x`` for ``-1 < x < 1``.

    Gives ``±inf`` at ``±1`` and NaN outside ``[-1, 1]``. Its derivative is
    :math:`\\frac{\\sqrt{\\pi}}{2} e^{\\operatorname{erfinv}(x)^2}`. Needs SciPy
    on the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``erfinv(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> erfinv(np.array([0.0, 0.5], np.float32)).array.round(4)
    array([0.    , 0.4769], dtype=float32)
    """
    return ErfInv().apply((x,))[0]


def erfcinv(x):
    """Elementwise inverse complementary error function: ``erfc(erfcinv(x)) == x``.

    Defined for ``0 < x < 2`` (``±inf`` at the ends, NaN outside). Its
    derivative is :math:`-\\frac{\\sqrt{\\pi}}{2} e^{\\operatorname{erfcinv}(x)^2}`.
    Needs SciPy on the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``erfcinv(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> erfcinv(np.array([0.5, 1.5], np.float32)).array.round(4)
    array([ 0.4769, -0.4769], dtype=float32)
    """
    return ErfcInv().apply((x,))[0]
