"""mean_absolute_error: the mean of ``|x0 - x1|`` over all elements."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array


class MeanAbsoluteError(FunctionNode):
    """``sum(|x0 - x1|) / x0.size`` (accumulated in float32 for float16 inputs)."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x0", "x1"))
        x0, x1 = in_types
        type_check.expect(x0.dtype.kind == "f", x0.dtype == x1.dtype, x0.shape == x1.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x0, x1 = inputs
        diff = force_array(x0 - x1)
        xp = backend.get_array_module(diff)
        xp.abs(diff, out=diff)
        acc = numpy.float32 if diff.dtype == numpy.float16 else diff.dtype
        return (force_array(diff.sum(dtype=acc) / diff.size, x0.dtype),)

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        sign = x0.xp.sign(x0.array - x1.array)
        gx0 = MeanAbsoluteErrorGrad(sign).apply((grad_outputs[0],))[0]
        return tuple([gx0 if i == 0 else -gx0 for i in indexes])


class MeanAbsoluteErrorGrad(FunctionNode):
    """``sign(x0 - x1) * gy / n``: linear in ``gy``, with the sign held as a constant."""

    def __init__(self, sign):
        self.sign = sign

    def forward(self, inputs):
        gy = inputs[0]
        sign = self.sign
        gx = sign * (gy * sign.dtype.type(1.0 / sign.size))
        return (force_array(gx, sign.dtype),)

    def backward(self, indexes, grad_outputs):
        return (ops.sum(grad_outputs[0] * self.sign) * (1.0 / self.sign.size),)


def mean_absolute_error(x0, x1):
    """Mean absolute error: ``sum(|x0 - x1|) / N``, where ``N = x0.size``.

    The gradient where ``x0 == x1`` is taken to be 0.

    Args:
        x0 (Variable or array): float16, float32 or float64 array of any shape.
        x1 (Variable or array): an array of the same shape and dtype as ``x0``.

    Returns:
        Variable: a 0-d array of ``x0``'s dtype. For float16 inputs the sum is
        accumulated in float32.

    >>> import numpy as np
    >>> x0 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    >>> x1 = np.array([1.0, 0.0, 3.5, 2.0], np.float32)
    >>> mean_absolute_error(x0, x1).array
    array(1.125, dtype=float32)
    """
    return MeanAbsoluteError().apply((x0, x1))[0]
