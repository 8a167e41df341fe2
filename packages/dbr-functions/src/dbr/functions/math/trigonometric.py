"""Trigonometric functions and their inverses: sin, cos, tan, arcsin, arccos, arctan, arctan2.

Each first-order gradient is one "grad" node that computes it from arrays in
one pass; the grad node's own backward is written with dbr functions, so
every function here is differentiable any number of times.
"""

import functools

from dbr.core import FunctionNode, backend, type_check
from dbr.core.ops import sum_to
from dbr.core.utils import force_array, force_type
from dbr.functions._docs import fill
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad
from dbr.functions.math._unary_docs import DOCS


class SinGrad(UnaryGrad):
    """``gy * cos(x)``: the gradient of :func:`sin`, itself differentiable."""

    def gradient(self, xp, x, gy):
        gx = force_array(xp.cos(x))
        gx *= gy
        return gx

    def grad_of_input(self, x, gy, ggx):
        return -ggx * gy * sin(x)


class Sin(UnaryElementwise):
    """Elementwise ``sin(x)``."""

    ufunc = "sin"
    grad = SinGrad


@fill(**DOCS)
def sin(x):
    """Elementwise sine, :math:`y_i = \\sin x_i`.

    {args_float_any_dtype}

    >>> import numpy as np
    >>> sin(np.array([0.0, np.pi / 2], np.float32)).array
    array([0., 1.], dtype=float32)
    """
    return Sin().apply((x,))[0]


class CosGrad(UnaryGrad):
    """``-gy * sin(x)``: the gradient of :func:`cos`, itself differentiable."""

    def gradient(self, xp, x, gy):
        gx = force_array(xp.sin(x))
        xp.negative(gx, out=gx)
        gx *= gy
        return gx

    def grad_of_input(self, x, gy, ggx):
        return -ggx * gy * cos(x)


class Cos(UnaryElementwise):
    """Elementwise ``cos(x)``."""

    ufunc = "cos"
    grad = CosGrad


@fill(**DOCS)
def cos(x):
    """Elementwise cosine, :math:`y_i = \\cos x_i`.

    {args_float}

    >>> import numpy as np
    >>> cos(np.array([0.0, np.pi], np.float32)).array
    array([ 1., -1.], dtype=float32)
    """
    return Cos().apply((x,))[0]


class TanGrad(UnaryGrad):
    """``gy * (1 + y**2)`` with ``y = tan(x)``: the gradient of :func:`tan`."""

    def gradient(self, xp, y, gy):
        gx = force_array(y * y)
        gx += force_type(gx.dtype, 1)
        gx *= gy
        return gx

    def grad_of_input(self, y, gy, ggx):
        return 2.0 * ggx * gy * y


class Tan(UnaryElementwise):
    """Elementwise ``tan(x)``; backward uses the output (``1 + y**2``)."""

    ufunc = "tan"
    retains_output = True
    grad = TanGrad


@fill(**DOCS)
def tan(x):
    """Elementwise tangent, :math:`y_i = \\tan x_i`.

    {args_float}

    >>> import numpy as np
    >>> tan(np.array([0.0, np.pi / 4])).array.round(4)
    array([0., 1.])
    """
    return Tan().apply((x,))[0]


class ArcsinGrad(UnaryGrad):
    """``sign * gy / sqrt(1 - x**2)``: the gradient of arcsin (``sign=1``) or arccos (``-1``)."""

    def __init__(self, sign):
        self.sign = sign

    def again(self):
        return ArcsinGrad(self.sign)

    def gradient(self, xp, x, gy):
        gx = force_array(x * x)
        xp.subtract(force_type(gx.dtype, 1), gx, out=gx)
        xp.sqrt(gx, out=gx)
        if self.sign < 0:
            xp.negative(gx, out=gx)
        xp.divide(gy, gx, out=gx)
        return gx

    def grad_of_input(self, x, gy, ggx):
        g = ggx * gy * x * (1.0 - x * x) ** -1.5
        return g if self.sign > 0 else -g


class Arcsin(UnaryElementwise):
    """Elementwise ``arcsin(x)``."""

    ufunc = "arcsin"
    grad = functools.partial(ArcsinGrad, 1)


class Arccos(UnaryElementwise):
    """Elementwise ``arccos(x)``."""

    ufunc = "arccos"
    grad = functools.partial(ArcsinGrad, -1)


def arcsin(x):
    """Elementwise inverse sine, :math:`y_i = \\arcsin x_i`, for :math:`-1 \\le x_i \\le 1`.

    Args:
        x (Variable or array): input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype, in :math:`[-\\pi/2, \\pi/2]`.

    >>> import numpy as np
    >>> arcsin(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 1.5708])
    """
    return Arcsin().apply((x,))[0]


def arccos(x):
    """Elementwise inverse cosine, :math:`y_i = \\arccos x_i`, for :math:`-1 \\le x_i \\le 1`.

    Args:
        x (Variable or array): input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype, in :math:`[0, \\pi]`.

    >>> import numpy as np
    >>> arccos(np.array([1.0, 0.0])).array.round(4)
    array([0.    , 1.5708])
    """
    return Arccos().apply((x,))[0]


class ArctanGrad(UnaryGrad):
    """``gy / (1 + x**2)``: the gradient of :func:`arctan`, itself differentiable."""

    def gradient(self, xp, x, gy):
        gx = force_array(x * x)
        gx += force_type(gx.dtype, 1)
        xp.divide(gy, gx, out=gx)
        return gx

    def grad_of_input(self, x, gy, ggx):
        w = 1.0 + x * x
        return -2.0 * ggx * gy * x / (w * w)


class Arctan(UnaryElementwise):
    """Elementwise ``arctan(x)``."""

    ufunc = "arctan"
    grad = ArctanGrad


def arctan(x):
    """Elementwise inverse tangent, :math:`y_i = \\arctan x_i`.

    Args:
        x (Variable or array): input of a floating dtype, any shape.

    Returns:
        Variable: of ``x``'s shape and dtype, in :math:`(-\\pi/2, \\pi/2)`.

    >>> import numpy as np
    >>> arctan(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 0.7854])
    """
    return Arctan().apply((x,))[0]


class Arctan2(FunctionNode):
    """Elementwise ``arctan2(x1, x2)``, the angle of the point ``(x2, x1)``."""

    _shapes = None

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x1", "x2"))
        x1, x2 = in_types
        type_check.expect(x1.dtype.kind == "f", x2.dtype == x1.dtype)
        type_check.expect_broadcast_shapes(x1.shape, x2.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x1, x2 = inputs
        if x1.shape != x2.shape:
            self._shapes = (x1.shape, x2.shape)
        return (force_array(backend.get_array_module(x1).arctan2(x1, x2)),)

    def backward(self, indexes, grad_outputs):
        x1, x2 = self.get_retained_inputs()
        gxs = Arctan2Grad().apply((x1, x2, grad_outputs[0]))
        if self._shapes is None:
            return gxs
        return tuple([sum_to(gxs[i], self._shapes[i]) for i in indexes])


class Arctan2Grad(FunctionNode):
    """``(gy * x2 / r, -gy * x1 / r)`` with ``r = x1**2 + x2**2``: the gradients of arctan2.

    Both outputs have the broadcast shape of the inputs (the caller sums them
    back to each input's shape).
    """

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x1, x2, gy = inputs
        scaled = force_array(x1 * x1 + x2 * x2)
        backend.get_array_module(x1).divide(gy, scaled, out=scaled)
        gx1 = force_array(x2 * scaled)
        gx2 = force_array(x1 * scaled)
        backend.get_array_module(x1).negative(gx2, out=gx2)
        return gx1, gx2

    def backward(self, indexes, grad_outputs):
        x1, x2, gy = self.get_retained_inputs()
        ggx1, ggx2 = grad_outputs
        sq1 = x1 * x1
        sq2 = x2 * x2
        r = sq1 + sq2
        ret = []
        for i in indexes:
            if i == 2:
                terms = [ggx1 * x2 if ggx1 is not None else None]
                terms.append(-ggx2 * x1 if ggx2 is not None else None)
                ret.append(_total(terms) / r)
                continue
            cross = 2.0 * x1 * x2
            diff = sq1 - sq2
            if i == 0:
                terms = [-ggx1 * cross if ggx1 is not None else None]
                terms.append(ggx2 * diff if ggx2 is not None else None)
            else:
                terms = [ggx1 * diff if ggx1 is not None else None]
                terms.append(ggx2 * cross if ggx2 is not None else None)
            g = _total(terms) * gy / (r * r)
            ret.append(sum_to(g, (x1, x2)[i].shape))
        return tuple(ret)


def _total(terms):
    terms = [t for t in terms if t is not None]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def arctan2(x1, x2):
    """Elementwise arctangent of ``x1 / x2`` choosing the quadrant: the angle of ``(x2, x1)``.

    .. math::
        y_i = \\operatorname{atan2}(x1_i, x2_i), \\qquad
        \\frac{\\partial y}{\\partial x1} = \\frac{x2}{x1^2 + x2^2}, \\quad
        \\frac{\\partial y}{\\partial x2} = \\frac{-x1}{x1^2 + x2^2}.

    Args:
        x1 (Variable or array): y-coordinates, of a floating dtype.
        x2 (Variable or array): x-coordinates, of ``x1``'s dtype; the shapes of
            ``x1`` and ``x2`` broadcast together.

    Returns:
        Variable: angles in radians in :math:`[-\\pi, \\pi]`, of the broadcast
        shape and the inputs' dtype.

    >>> import numpy as np
    >>> arctan2(np.array([1.0, 1.0]), np.array([1.0, -1.0])).array.round(4)
    array([0.7854, 2.3562])
    """
    return Arctan2().apply((x1, x2))[0]
