"""The gamma family: lgamma, digamma, polygamma and the Hurwitz zeta function.

Forward values come from SciPy on the CPU (the ``special`` extra) and from
``cupyx.scipy.special`` on the GPU. Each derivative is the next member of the
family (``lgamma' = digamma``, ``digamma' = polygamma(1, .)``,
``polygamma(n, .)' = polygamma(n + 1, .)``, ``d zeta(x, q) / dq = -x zeta(x + 1, q)``),
so every function can be differentiated any number of times.
"""

import numbers

import numpy

from dbr.core import FunctionNode, Variable, type_check
from dbr.core.ops import sum_to
from dbr.core.utils import force_array, force_type
from dbr.functions.math._special import UnarySpecialFunction, array_module, special_function


class LGamma(UnarySpecialFunction):
    """The logarithm of the absolute value of the gamma function; see :func:`lgamma`."""

    name = "lgamma"
    special_name = "gammaln"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (DiGamma().apply((x,))[0] * grad_outputs[0],)


class DiGamma(UnarySpecialFunction):
    """The digamma function; see :func:`digamma`."""

    name = "digamma"
    special_name = "psi"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (self.evaluate(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        one = x.xp.ones((), numpy.int32)
        return (PolyGamma().apply((one, x))[0] * grad_outputs[0],)


class PolyGamma(FunctionNode):
    """The polygamma function of integer order ``n``; see :func:`polygamma`."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("n", "x"))
        type_check.expect(in_types.size() == 2)
        n_type, x_type = in_types
        type_check.expect(n_type.dtype.kind == "i", x_type.dtype.kind == "f")
        type_check.expect_broadcast_shapes(n_type.shape, x_type.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        n, x = inputs
        f = special_function(array_module(x), "polygamma", "polygamma")
        return (force_array(f(n, x), x.dtype),)

    def backward(self, indexes, grad_outputs):
        n, x = self.get_retained_inputs()
        if 1 not in indexes:
            return (None,)
        n = n.array
        next_order = force_array(n + n.dtype.type(1))
        gx = PolyGamma().apply((next_order, x))[0] * grad_outputs[0]
        if gx.shape != x.shape:
            gx = sum_to(gx, x.shape)
        return None, gx


class Zeta(FunctionNode):
    """The Hurwitz zeta function ``zeta(x, q)`` as a function of ``q``; see :func:`zeta`.

    Args:
        x: the exponent, a real scalar or an array whose shape broadcasts to ``q``'s.
    """

    def __init__(self, x):
        self.x = x

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("q",))
        type_check.expect(in_types.size() == 1, in_types[0].dtype.kind == "f")
        x_shape = numpy.shape(self.x)
        q_shape = tuple(type_check.eval(in_types[0].shape))
        try:
            fits = numpy.broadcast_shapes(x_shape, q_shape) == q_shape
        except ValueError:
            fits = False
        if not fits:
            raise type_check.InvalidType(
                "x.shape broadcasts to q.shape", f"x.shape == {x_shape}, q.shape == {q_shape}"
            )

    def forward(self, inputs):
        self.retain_inputs((0,))
        q = inputs[0]
        xp = array_module(q)
        if xp is not numpy and isinstance(self.x, numpy.ndarray):
            # CuPy's ufuncs take no NumPy arrays; backward reuses the moved exponent.
            self.x = xp.asarray(self.x)
        f = special_function(xp, "zeta", "zeta")
        return (force_array(f(self.x, q), q.dtype),)

    def backward(self, indexes, grad_outputs):
        (q,) = self.get_retained_inputs()
        x = self.x
        dzeta = Zeta(x + 1).apply((q,))[0] * grad_outputs[0]
        return (dzeta * force_type(q.dtype, -x),)


def lgamma(x):
    """Elementwise logarithm of the absolute value of the gamma function, ``log|Γ(x)|``.

    Its derivative is :func:`digamma`. Needs SciPy on the CPU
    (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``lgamma(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> lgamma(np.array([1.0, 3.0], np.float32)).array.round(4)
    array([0.    , 0.6931], dtype=float32)
    """
    return LGamma().apply((x,))[0]


def digamma(x):
    """Elementwise digamma function ``ψ(x) = d/dx log Γ(x)``.

    Its derivative is ``polygamma(1, x)``. Needs SciPy on the CPU
    (``pip install "dbr-functions[special]"``).

    Args:
        x (Variable or array): input of any shape, float16, float32 or float64.

    Returns:
        Variable: ``digamma(x)``, of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> digamma(np.array([1.0, 2.0], np.float32)).array.round(4)
    array([-0.5772,  0.4228], dtype=float32)
    """
    return DiGamma().apply((x,))[0]


def polygamma(n, x):
    """Elementwise polygamma function ``ψ⁽ⁿ⁾(x)``, the ``n``-th derivative of :func:`digamma`.

    ``polygamma(0, x)`` is ``digamma(x)``. The function is differentiable in
    ``x`` only, with derivative ``polygamma(n + 1, x)``. Needs SciPy on the
    CPU (``pip install "dbr-functions[special]"``).

    Args:
        n (Variable, array or int): the orders, a signed-integer array whose
            shape broadcasts with ``x``'s (a Python int is taken as a 0-d
            int32 array).
        x (Variable or array): float16, float32 or float64.

    Returns:
        Variable: ``polygamma(n, x)``, of the broadcast shape and ``x``'s dtype.

    >>> import numpy as np
    >>> polygamma(np.array(1, np.int32), np.array([1.0], np.float32)).array.round(4)
    array([1.6449], dtype=float32)
    """
    if isinstance(n, numbers.Integral) and not isinstance(n, bool):
        xp = x.xp if isinstance(x, Variable) else array_module(x)
        n = xp.full((), n, numpy.int32)
    return PolyGamma().apply((n, x))[0]


def zeta(x, q):
    """Elementwise Hurwitz zeta function ``ζ(x, q) = Σ_{k≥0} (k + q) ** (-x)``.

    As in Chainer it is differentiable with respect to ``q`` only:
    ``dζ(x, q)/dq = -x ζ(x + 1, q)``; ``x`` is a constant (a Variable given as
    ``x`` contributes its array and receives no gradient). Needs SciPy on the
    CPU (``pip install "dbr-functions[special]"``).

    Args:
        x (float, array or Variable): the exponent, a real scalar or an array
            (a NumPy one is moved to ``q``'s device) whose shape broadcasts to ``q``'s.
        q (Variable or array): float16, float32 or float64.

    Returns:
        Variable: ``ζ(x, q)``, of ``q``'s shape and dtype.

    >>> import numpy as np
    >>> zeta(2.0, np.array([1.0, 2.0], np.float32)).array.round(4)
    array([1.6449, 0.6449], dtype=float32)
    """
    if isinstance(x, Variable):
        x = x.array
    elif not isinstance(x, numbers.Real) and getattr(x, "dtype", None) is None:
        raise TypeError(
            f"zeta: expected x to be a real scalar, an array or a Variable, got {type(x).__name__}"
        )
    return Zeta(x).apply((q,))[0]
