"""The standard normal distribution function and its relatives: ndtr, log_ndtr, ndtri.

Forward values come from SciPy on the CPU (the ``special`` extra) and from
``cupyx.scipy.special`` on the GPU. Gradients are built from FunctionNodes,
so every function can be differentiated any number of times.
"""

import math

from dbr.core import FunctionNode
from dbr.core.utils import force_array, force_type
from dbr.functions.math._special import UnarySpecialFunction, array_module, special_function
from dbr.functions.math.erf import ExpSquareGrad

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


class Ndtr(UnarySpecialFunction):
    """The standard normal cumulative distribution function; see :func:`ndtr`."""

    name = "ndtr"
    special_name = "ndtr"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return ExpSquareGrad(_INV_SQRT_2PI, -0.5).apply((x, grad_outputs[0]))


class LogNdtr(UnarySpecialFunction):
    """The logarithm of the standard normal distribution function; see :func:`log_ndtr`."""

    name = "log_ndtr"
    special_name = "log_ndtr"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (NormalPdfOverCdf().apply((x,))[0] * grad_outputs[0],)


class NormalPdfOverCdf(FunctionNode):
    """``r(x) = pdf(x) / ndtr(x)``, the derivative of ``log_ndtr``, without underflow.

    Computed as ``sqrt(2 / pi) / erfcx(-x / sqrt(2))``, which stays accurate
    where ``pdf`` and ``ndtr`` both underflow (very negative ``x``) and
    tends to 0 for large ``x``. Its derivative is ``-r (x + r)``.
    """

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x = inputs[0]
        xp = array_module(x)
        erfcx = special_function(xp, "erfcx", "log_ndtr")
        # float16 is divided in SciPy's wider result dtype, where erfcx does not overflow.
        r = force_array(erfcx(x * force_type(x.dtype, -_INV_SQRT_2)))
        xp.divide(force_type(r.dtype, _SQRT_2_OVER_PI), r, out=r)
        return (force_array(r, x.dtype),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        (r,) = self.get_retained_outputs()
        return (grad_outputs[0] * r * (x + r) * -1.0,)


class Ndtri(UnarySpecialFunction):
    """The inverse of :func:`ndtr`; see :func:`ndtri`."""

    name = "ndtri"
    special_name = "ndtri"

    def forward(self, inputs):
        self.retain_outputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return ExpSquareGrad(_SQRT_2PI, 0.5).apply((y, grad_outputs[0]))


def ndtr(x):
    """Elementwise standard normal cumulative distribution function.

    .. math::
        \\operatorname{ndtr}(x) = \\frac{1}{\\sqrt{2\\pi}} \\int_{-\\infty}^x e^{-t^2/2} dt,
        \\qquad \\operatorname{ndtr}'(x) = \\frac{1}{\\sqrt{2\\pi}} e^{-x^2/2}.

    Needs SciPy on the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``ndtr(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> ndtr(np.array([0.0, 1.0], np.float32)).array.round(4)
    array([0.5   , 0.8413], dtype=float32)
    """
    return Ndtr().apply((x,))[0]


def log_ndtr(x):
    """Elementwise logarithm of :func:`ndtr`, accurate far into both tails.

    Its derivative ``pdf(x) / ndtr(x)`` is computed as
    :math:`\\sqrt{2/\\pi} / \\operatorname{erfcx}(-x/\\sqrt{2})`, which does
    not underflow for very negative ``x``. Needs SciPy on the CPU
    (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``log(ndtr(x))``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> log_ndtr(np.array([0.0, -20.0], np.float32)).array.round(4)
    array([  -0.6931, -203.9172], dtype=float32)
    """
    return LogNdtr().apply((x,))[0]


def ndtri(x):
    """Elementwise inverse of :func:`ndtr`: ``ndtr(ndtri(p)) == p`` for ``0 < p < 1``.

    Gives ``∓inf`` at 0 and 1 and NaN outside ``[0, 1]``. Its derivative is
    :math:`\\sqrt{2\\pi}\\, e^{\\operatorname{ndtri}(p)^2/2}`. Needs SciPy on
    the CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): probabilities of any shape, float16, float32 or float64.

    Returns:
        Variable: ``ndtri(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> ndtri(np.array([0.5, 0.975], np.float32)).array.round(4)
    array([0.  , 1.96], dtype=float32)
    """
    return Ndtri().apply((x,))[0]
