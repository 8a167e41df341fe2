"""decov: the DeCov loss, which penalizes correlations between hidden units."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array

_REDUCE = ("half_squared_sum", "no")


class DeCov(FunctionNode):
    """Covariance of the columns of ``h``, diagonal zeroed, or half its squared norm."""

    def __init__(self, reduce="half_squared_sum"):
        if reduce not in _REDUCE:
            raise ValueError(
                f"decov: expected reduce to be 'half_squared_sum' or 'no', got {reduce!r}"
            )
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("h",))
        h = in_types[0]
        type_check.expect(h.dtype.kind == "f", h.ndim == 2)

    def forward(self, inputs):
        self.retain_inputs((0,))
        h = inputs[0]
        xp = backend.get_array_module(h)
        hc = h.astype(numpy.float32) if h.dtype == numpy.float16 else h
        hc = hc - hc.mean(axis=0, keepdims=True)
        covariance = hc.T @ hc
        xp.fill_diagonal(covariance, 0)
        covariance /= len(h)
        if self.reduce == "half_squared_sum":
            return (force_array(xp.vdot(covariance, covariance) * 0.5, h.dtype),)
        return (force_array(covariance, h.dtype),)

    def backward(self, indexes, grad_outputs):
        h = self.get_retained_inputs()[0]
        g = grad_outputs[0]
        n, m = h.shape
        xp = h.xp
        off_diagonal = xp.ones((m, m), h.dtype)
        xp.fill_diagonal(off_diagonal, 0)
        mean = ops.sum(h, axis=0, keepdims=True) * (1.0 / n)
        hc = h - ops.broadcast_to(mean, h.shape)
        if self.reduce == "half_squared_sum":
            # d(|C|**2 / 2) / dC is C, which is symmetric.
            c = ops.matmul(hc, hc, transa=True) * off_diagonal
            return (ops.matmul(hc, c) * (g * (2.0 / (n * n))),)
        g = g * off_diagonal
        return (ops.matmul(hc, g + ops.transpose(g)) * (1.0 / n),)


def decov(h, reduce="half_squared_sum"):
    """DeCov loss of ``h`` (https://arxiv.org/abs/1511.06068).

    With ``hc`` the input minus its mean over the batch (axis 0), ``C`` is the
    covariance matrix ``hc.T @ hc / N`` with its diagonal set to 0; the loss
    is ``sum(C ** 2) / 2``, which penalizes correlations between units.

    Args:
        h (Variable or array): activations of shape ``(N, M)``, float16,
            float32 or float64.
        reduce (str): ``'half_squared_sum'`` returns half the squared
            Frobenius norm of ``C`` (a 0-d array); ``'no'`` returns ``C``
            itself, of shape ``(M, M)``.

    Returns:
        Variable: the loss, of ``h``'s dtype.

    >>> import numpy as np
    >>> h = np.array([[1.0, 2.0], [-1.0, 0.0]], np.float32)
    >>> decov(h, reduce='no').array
    array([[0., 1.],
           [1., 0.]], dtype=float32)
    >>> decov(h).array
    array(1., dtype=float32)
    """
    return DeCov(reduce).apply((h,))[0]
