"""det and batch_det: determinants of square matrices."""

import numpy

from dbr.core import ops
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array
from dbr.functions.math.inv import SquareMatricesFunction, batch_inv, inv

_float16 = numpy.dtype(numpy.float16)


class _DetBase(SquareMatricesFunction):
    _inverse = None

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        a = inputs[0]
        work = a.astype(numpy.float32) if a.dtype == _float16 else a
        return (force_array(get_array_module(a).linalg.det(work), a.dtype),)

    def backward(self, indexes, grad_outputs):
        # d det(A) = det(A) tr(A^-1 dA), so gA = gy det(A) A^-T (A must be invertible).
        a = self.get_retained_inputs()[0]
        y = self.get_retained_outputs()[0]
        ndim = a.ndim
        swap = tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
        inv_t = self._inverse(ops.transpose(a, swap))
        scale = ops.reshape(grad_outputs[0] * y, y.shape + (1, 1))
        return (ops.broadcast_to(scale, a.shape) * inv_t,)


class Det(_DetBase):
    """The determinant of one square matrix."""

    _ndim = 2
    _inverse = staticmethod(inv)


class BatchDet(_DetBase):
    """The determinants of a batch of square matrices."""

    _ndim = 3
    _inverse = staticmethod(batch_inv)


def det(a):
    """Determinant of the square matrix ``a``.

    Its gradient is ``det(a) * inv(a).T``, so backward needs ``a`` invertible.

    Args:
        a (Variable or array): matrix of shape ``(n, n)``, float16, float32
            or float64 (float16 is computed in float32, as in Chainer).

    Returns:
        Variable: the determinant, 0-d, of ``a``'s dtype.

    >>> import numpy as np
    >>> det(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)).array
    array(5., dtype=float32)
    """
    return Det().apply((a,))[0]


def batch_det(a):
    """Determinants of a batch of square matrices.

    Its gradient is ``det(a[i]) * inv(a[i]).T`` for each matrix, so backward
    needs every matrix invertible.

    Args:
        a (Variable or array): matrices of shape ``(m, n, n)``, float16,
            float32 or float64 (float16 is computed in float32).

    Returns:
        Variable: the ``m`` determinants, of shape ``(m,)`` and ``a``'s dtype.

    >>> import numpy as np
    >>> batch_det(np.stack([np.eye(2), 3 * np.eye(2)]).astype(np.float32)).array
    array([1., 9.], dtype=float32)
    """
    return BatchDet().apply((a,))[0]
