"""mean_absolute_error: the mean of ``|x0 - x1|`` over all elements."""

import numpy

from dbr.core import FunctionNode, backend, ops
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.loss._difference import MEAN_ARGS, DifferenceLoss


class MeanAbsoluteError(DifferenceLoss):
    """``sum(|x0 - x1|) / x0.size`` (accumulated in float32 for float16 inputs)."""

    @staticmethod
    def loss(diff, x0):
        """The mean of ``|diff|``, as a 0-d array of ``x0``'s dtype."""
        xp = backend.get_array_module(diff)
        xp.abs(diff, out=diff)
        acc = numpy.float32 if diff.dtype == numpy.float16 else diff.dtype
        return force_array(diff.sum(dtype=acc) / diff.size, x0.dtype)

    @staticmethod
    def grad_x0(x0, x1, gy):
        """``sign(x0 - x1) * gy / n``, by :class:`MeanAbsoluteErrorGrad`."""
        sign = x0.xp.sign(x0.array - x1.array)
        return MeanAbsoluteErrorGrad(sign).apply((gy,))[0]


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


@fill(mean_args=MEAN_ARGS)
def mean_absolute_error(x0, x1):
    """Mean absolute error: ``sum(|x0 - x1|) / N``, where ``N = x0.size``.

    The gradient where ``x0 == x1`` is taken to be 0.

    {mean_args}
    >>> x1 = np.array([1.0, 0.0, 3.5, 2.0], np.float32)
    >>> mean_absolute_error(x0, x1).array
    array(1.125, dtype=float32)
    """
    return MeanAbsoluteError().apply((x0, x1))[0]
