"""crelu: the concatenated rectified linear unit."""

from dbr.core import FunctionNode, as_variable, backend, ops
from dbr.functions.activation.softmax import check_axis, check_float_input_with_axis


class CReLU(FunctionNode):
    """``concat((relu(x), relu(-x)), axis)``."""

    def __init__(self, axis=1):
        self.axis = check_axis(axis, "crelu")

    def check_type_forward(self, in_types):
        check_float_input_with_axis(in_types, self.axis)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = backend.get_array_module(x)
        axis = self.axis % x.ndim
        n = x.shape[axis]
        shape = x.shape[:axis] + (2 * n,) + x.shape[axis + 1 :]
        y = xp.zeros(shape, x.dtype)
        lead = (slice(None),) * axis
        positive = y[lead + (slice(0, n),)]
        negative = y[lead + (slice(n, 2 * n),)]
        xp.maximum(x, positive, out=positive)
        xp.negative(x, out=negative)
        xp.maximum(negative, 0, out=negative)
        return (y,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array
        gy = grad_outputs[0]
        axis = self.axis % x.ndim
        n = x.shape[axis]
        lead = (slice(None),) * axis
        gy_positive = ops.get_item(gy, lead + (slice(0, n),))
        gy_negative = ops.get_item(gy, lead + (slice(n, 2 * n),))
        positive = as_variable((x > 0).astype(x.dtype))
        negative = as_variable((x < 0).astype(x.dtype))
        return (gy_positive * positive - gy_negative * negative,)


def crelu(x, axis=1):
    """Concatenated rectified linear unit, ``concat((relu(x), relu(-x)), axis)``.

    The output has twice ``x``'s length along ``axis``: the first half holds
    :math:`\\max(x, 0)` and the second :math:`\\max(-x, 0)` (Shang et al.,
    2016).

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64) with at least one axis.
        axis (int): the axis along which the two halves are concatenated
            (negative counts from the last axis).

    Returns:
        Variable: of ``x``'s dtype and shape, except ``2 * x.shape[axis]``
        along ``axis``.

    Raises:
        TypeError: ``axis`` is not an int.
        InvalidType: ``x`` is not floating or ``axis`` is not one of its axes.

    >>> import numpy as np
    >>> crelu(np.array([[-1.0, 2.0]], np.float32)).array
    array([[0., 2., 1., 0.]], dtype=float32)
    """
    return CReLU(axis).apply((x,))[0]
