"""batch_l2_norm_squared: the squared L2 norm of each sample."""

import math

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module

_float16 = numpy.dtype(numpy.float16)


class BatchL2NormSquared(FunctionNode):
    """``y[i] = sum(x[i] ** 2)`` over all axes but the first."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim >= 2)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        flat = x.reshape(x.shape[0], math.prod(x.shape[1:]))
        if x.dtype == _float16:
            flat = flat.astype(numpy.float32)
        y = get_array_module(x).einsum("ij,ij->i", flat, flat)
        return (y.astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return BatchL2NormSquaredGrad().apply((x, grad_outputs[0]))


class BatchL2NormSquaredGrad(FunctionNode):
    """``2 * x * gy`` with ``gy`` (one value per sample) broadcast over each sample."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gy = inputs
        gx = x * gy.reshape((len(gy),) + (1,) * (x.ndim - 1))
        gx *= x.dtype.type(2)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        g2 = grad_outputs[0] * 2.0
        ret = []
        for i in indexes:
            if i == 0:
                shape = (len(gy),) + (1,) * (x.ndim - 1)
                ret.append(g2 * ops.broadcast_to(ops.reshape(gy, shape), x.shape))
            else:
                ret.append(ops.sum(g2 * x, axis=tuple(range(1, x.ndim))))
        return tuple(ret)


def batch_l2_norm_squared(x):
    """Squared L2 norm of each sample of a batch (no reduction over the batch).

    ``y[i] = sum(x[i] ** 2)``, where ``x[i]`` is flattened.

    Args:
        x (Variable or array): input of shape ``(N, ...)`` with at least two
            axes, float16, float32 or float64 (float16 is accumulated in
            float32); the first axis is the batch.

    Returns:
        Variable: the squared norms, of shape ``(N,)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> batch_l2_norm_squared(np.array([[3.0, 4.0], [1.0, 0.0]], np.float32)).array
    array([25.,  1.], dtype=float32)
    """
    return BatchL2NormSquared().apply((x,))[0]
