"""log_softmax: the logarithm of softmax along an axis, computed stably."""

import numpy

from dbr.core import FunctionNode, backend, ops
from dbr.functions.activation.softmax import check_axis, check_float_input_with_axis
from dbr.functions.math.exponential import exp


class LogSoftmax(FunctionNode):
    """``x - logsumexp(x, axis)``, with the maximum along ``axis`` taken out first."""

    def __init__(self, axis=1):
        self.axis = check_axis(axis, "log_softmax")

    def check_type_forward(self, in_types):
        check_float_input_with_axis(in_types, self.axis, nonempty=True)

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        axis = self.axis
        if x.dtype == numpy.float16:
            y = x.astype(numpy.float32)
            y -= y.max(axis=axis, keepdims=True)
        else:
            y = x - x.max(axis=axis, keepdims=True)
        e = xp.exp(y)
        y -= xp.log(e.sum(axis=axis, keepdims=True))
        del e
        if x.dtype == numpy.float16:
            y = y.astype(numpy.float16)
        self.retain_outputs((0,))
        return (y,)

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return LogSoftmaxGrad(self.axis).apply((y, grad_outputs[0]))


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


def log_softmax(x, axis=1):
    """Logarithm of the softmax along ``axis``.

    .. math:: y_i = x_i - \\log \\sum_j \\exp(x_j)

    Computed as ``x - m - log(sum(exp(x - m)))`` with ``m`` the maximum along
    ``axis``, so it stays finite where ``log(softmax(x))`` would underflow to
    ``-inf``; float16 inputs are computed in float32.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64) with at least one axis, e.g. ``(batch, classes)``.
        axis (int): the axis along which to normalize (negative counts from
            the last axis).

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``x`` is not floating, or ``axis`` is not one of its
            axes or has length 0.

    >>> import numpy as np
    >>> log_softmax(np.array([[0.0, 1.0, 2.0]], np.float32)).array.round(4)
    array([[-2.4076, -1.4076, -0.4076]], dtype=float32)
    """
    return LogSoftmax(axis).apply((x,))[0]
