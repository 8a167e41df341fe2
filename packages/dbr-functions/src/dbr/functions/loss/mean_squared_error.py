"""mean_squared_error: the mean of ``(x0 - x1) ** 2`` over all elements."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array


class MeanSquaredError(FunctionNode):
    """``sum((x0 - x1) ** 2) / x0.size`` (accumulated in float32 for float16 inputs)."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x0", "x1"))
        x0, x1 = in_types
        type_check.expect(x0.dtype.kind == "f", x0.dtype == x1.dtype, x0.shape == x1.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x0, x1 = inputs
        diff = force_array(x0 - x1)
        if diff.dtype == numpy.float16:
            diff = diff.astype(numpy.float32)
        xp = backend.get_array_module(diff)
        return (force_array(xp.vdot(diff, diff) / diff.size, x0.dtype),)

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        gx0 = MeanSquaredErrorGrad().apply((x0, x1, grad_outputs[0]))[0]
        return tuple([gx0 if i == 0 else -gx0 for i in indexes])


class MeanSquaredErrorGrad(FunctionNode):
    """``(2 / n) * gy * (x0 - x1)``: the gradient of the mean squared error by ``x0``."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x0, x1, gy = inputs
        gx = force_array(x0 - x1)
        gx *= gy * x0.dtype.type(2.0 / gx.size)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x0, x1, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        coeff = 2.0 / x0.size
        ret = []
        g_x0 = None
        for i in indexes:
            if i == 2:
                ret.append(ops.sum(ggx * (x0 - x1)) * coeff)
                continue
            if g_x0 is None:
                g_x0 = ggx * (gy * coeff)
            ret.append(g_x0 if i == 0 else -g_x0)
        return tuple(ret)


def mean_squared_error(x0, x1):
    """Mean squared error: ``sum((x0 - x1) ** 2) / N``, where ``N = x0.size``.

    Args:
        x0 (Variable or array): float16, float32 or float64 array of any shape.
        x1 (Variable or array): an array of the same shape and dtype as ``x0``.

    Returns:
        Variable: a 0-d array of ``x0``'s dtype. For float16 inputs the sum is
        accumulated in float32.

    >>> import numpy as np
    >>> x0 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    >>> x1 = np.array([1.0, 0.0, 3.0, 2.0], np.float32)
    >>> mean_squared_error(x0, x1).array
    array(2., dtype=float32)
    """
    return MeanSquaredError().apply((x0, x1))[0]
