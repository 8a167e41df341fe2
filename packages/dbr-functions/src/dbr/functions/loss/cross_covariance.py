"""cross_covariance: the cross-covariance penalty between two batches of features."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array

_REDUCE = ("half_squared_sum", "no")


def _centered(x):
    """``x`` minus its mean over axis 0 (in float32 for float16 inputs)."""
    if x.dtype == numpy.float16:
        x = x.astype(numpy.float32)
    return x - x.mean(axis=0, keepdims=True)


def _centered_variable(x):
    """The Variable ``x - mean(x, axis=0)``, differentiable by ``x``."""
    mean = ops.sum(x, axis=0, keepdims=True) * (1.0 / x.shape[0])
    return x - ops.broadcast_to(mean, x.shape)


class CrossCovariance(FunctionNode):
    """The cross-covariance matrix ``C = yc.T @ zc / N``, or half its squared Frobenius norm."""

    def __init__(self, reduce="half_squared_sum"):
        if reduce not in _REDUCE:
            raise ValueError(
                f"cross_covariance: expected reduce to be 'half_squared_sum' or 'no', "
                f"got {reduce!r}"
            )
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("y", "z"))
        y, z = in_types
        type_check.expect(
            y.dtype.kind == "f",
            y.dtype == z.dtype,
            y.ndim == 2,
            z.ndim == 2,
            y.shape[0] == z.shape[0],
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, z = inputs
        covariance = _centered(y).T @ _centered(z)
        covariance /= len(y)
        if self.reduce == "half_squared_sum":
            xp = backend.get_array_module(covariance)
            return (force_array(xp.vdot(covariance, covariance) * 0.5, y.dtype),)
        return (force_array(covariance, y.dtype),)

    def backward(self, indexes, grad_outputs):
        y, z = self.get_retained_inputs()
        g = grad_outputs[0]
        n = y.shape[0]
        y_c = _centered_variable(y)
        z_c = _centered_variable(z)
        if self.reduce == "half_squared_sum":
            # d(|C|**2 / 2) / dC is C itself.
            g = ops.matmul(y_c, z_c, transa=True) * (g * (1.0 / n))
        g = g * (1.0 / n)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(ops.matmul(z_c, g, transb=True))
            else:
                ret.append(ops.matmul(y_c, g))
        return tuple(ret)


def cross_covariance(y, z, reduce="half_squared_sum"):
    """Cross-covariance penalty between ``y`` and ``z``.

    With ``yc`` and ``zc`` the inputs minus their means over the batch (axis 0),
    the cross-covariance matrix is ``C = yc.T @ zc / N``; the loss is
    ``sum(C ** 2) / 2``. Penalizing it helps disentangle two sets of features
    (https://arxiv.org/abs/1412.6583).

    Args:
        y (Variable or array): features of shape ``(N, M)``, float16, float32
            or float64.
        z (Variable or array): features of shape ``(N, K)``, of ``y``'s dtype.
        reduce (str): ``'half_squared_sum'`` returns half the squared Frobenius
            norm of ``C`` (a 0-d array); ``'no'`` returns ``C`` itself, of shape
            ``(M, K)``.

    Returns:
        Variable: the loss, of ``y``'s dtype.

    >>> import numpy as np
    >>> y = np.array([[1.0, 0.0], [-1.0, 2.0]], np.float32)
    >>> z = np.array([[2.0], [0.0]], np.float32)
    >>> cross_covariance(y, z, reduce='no').array
    array([[ 1.],
           [-1.]], dtype=float32)
    >>> cross_covariance(y, z).array
    array(1., dtype=float32)
    """
    return CrossCovariance(reduce).apply((y, z))[0]
