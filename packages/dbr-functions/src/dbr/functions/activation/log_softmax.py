"""log_softmax: the logarithm of softmax along an axis, computed stably."""

import numpy

from dbr.core import FunctionNode, backend, ops
from dbr.functions._docs import fill
from dbr.functions.activation.softmax import DOCS, NormalizedAlongAxis
from dbr.functions.math.exponential import exp


class LogSoftmaxGrad(FunctionNode):
    """``gy - exp(y) * sum(gy, axis)`` from the output ``y`` of log_softmax and its gradient."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, gy = inputs
        xp = backend.get_array_module(y)
        if y.dtype == numpy.float16:
            s = gy.sum(axis=self.axis, keepdims=True, dtype=numpy.float32)
        else:
            s = gy.sum(axis=self.axis, keepdims=True)
        gx = xp.exp(y)
        xp.multiply(gx, s, out=gx, casting="same_kind")
        xp.subtract(gy, gx, out=gx)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        axis = self.axis
        softmax = exp(y)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(-ggx * softmax * ops.sum(gy, axis=axis, keepdims=True))
            else:
                ret.append(ggx - ops.sum(ggx * softmax, axis=axis, keepdims=True))
        return tuple(ret)


class LogSoftmax(NormalizedAlongAxis):
    """``x - logsumexp(x, axis)``, with the maximum along ``axis`` taken out first."""

    grad = LogSoftmaxGrad
    who = "log_softmax"

    @staticmethod
    def normalize(xp, y, axis):
        """``y -= log(sum(exp(y), axis))``, in place."""
        y -= xp.log(xp.exp(y).sum(axis=axis, keepdims=True))


@fill(**DOCS)
def log_softmax(x, axis=1):
    """Logarithm of the softmax along ``axis``.

    .. math:: y_i = x_i - \\log \\sum_j \\exp(x_j)

    Computed as ``x - m - log(sum(exp(x - m)))`` with ``m`` the maximum along
    ``axis``, so it stays finite where ``log(softmax(x))`` would underflow to
    ``-inf``; float16 inputs are computed in float32.

    Args:
        {x_and_axis}

    Returns:
        Variable: of ``x``'s shape and dtype.

    {axis_raises}

    >>> import numpy as np
    >>> log_softmax(np.array([[0.0, 1.0, 2.0]], np.float32)).array.round(4)
    array([[-2.4076, -1.4076, -0.4076]], dtype=float32)
    """
    return LogSoftmax(axis).apply((x,))[0]
