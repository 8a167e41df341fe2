"""fmod: the elementwise remainder of a division, with the sign of the dividend."""

from dbr.core import FunctionNode, Variable, backend, type_check
from dbr.core.ops import sum_to
from dbr.core.utils import force_array


class Fmod(FunctionNode):
    """Elementwise ``fmod(x, divisor) = x - fix(x / divisor) * divisor``."""

    _shapes = None

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "divisor"))
        x, divisor = in_types
        type_check.expect(x.dtype.kind == "f", divisor.dtype == x.dtype)
        type_check.expect_broadcast_shapes(x.shape, divisor.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, divisor = inputs
        if x.shape != divisor.shape:
            self._shapes = (x.shape, divisor.shape)
        return (force_array(backend.get_array_module(x).fmod(x, divisor), x.dtype),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        x, divisor = self.get_retained_inputs()
        shapes = self._shapes or (x.shape, divisor.shape)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(sum_to(gy, shapes[0]))
            else:
                # fix(x / divisor) is piecewise constant: a constant for backprop.
                xp = backend.get_array_module(x)
                quotient = force_array(xp.fix(x.array / divisor.array), x.dtype)
                xp.negative(quotient, out=quotient)
                ret.append(sum_to(gy * Variable(quotient, requires_grad=False), shapes[1]))
        return tuple(ret)


def fmod(x, divisor):
    """Elementwise remainder of ``x / divisor`` with the sign of ``x`` (C's ``fmod``).

    .. math::
        y_i = x_i - \\operatorname{fix}(x_i / d_i)\\, d_i, \\qquad
        \\frac{\\partial y}{\\partial x} = 1, \\quad
        \\frac{\\partial y}{\\partial d} = -\\operatorname{fix}(x / d),

    where :math:`\\operatorname{fix}` rounds toward zero.

    Args:
        x (Variable or array): the dividend, of a floating dtype.
        divisor (Variable or array): the divisor, of ``x``'s dtype; the shapes
            of ``x`` and ``divisor`` broadcast together.

    Returns:
        Variable: of the broadcast shape and ``x``'s dtype.

    >>> import numpy as np
    >>> fmod(np.array([5.5, -5.5], np.float32), np.array([2.0, 2.0], np.float32)).array
    array([ 1.5, -1.5], dtype=float32)
    """
    return Fmod().apply((x, divisor))[0]
