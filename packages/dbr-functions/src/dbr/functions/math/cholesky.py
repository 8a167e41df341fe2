"""cholesky: the lower-triangular factor of a symmetric positive-definite matrix."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.math.inv import inv


class Cholesky(FunctionNode):
    """``L`` lower-triangular with ``L @ L.T == a``; ``a``'s gradient is symmetric."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a",))
        a_type = in_types[0]
        type_check.expect(
            a_type.dtype.kind == "f",
            a_type.dtype != numpy.float16,
            a_type.ndim == 2,
            a_type.shape[0] == a_type.shape[1],
        )

    def forward(self, inputs):
        self.retain_outputs((0,))
        a = inputs[0]
        try:
            lower = get_array_module(a).linalg.cholesky(a)
        except numpy.linalg.LinAlgError as e:
            raise ValueError(f"cholesky: the input is not positive definite ({e})") from None
        return (lower.astype(a.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        # With dA = dL L^T + L dL^T and L^-1 dL lower-triangular:
        # dL = L phi(L^-1 dA L^-T), phi = lower triangle with half the diagonal; hence
        # <gL, dL> = <S, dA> for every symmetric dA, with S = L^-T phi(L^T gL) L^-1.
        # As Chainer and PyTorch do, the gradient is S's symmetric part, the one that
        # only sees symmetric perturbations of a.
        lower = self.get_retained_outputs()[0]
        n = lower.shape[0]
        xp = get_array_module(lower.array)
        phi = xp.tri(n, dtype=lower.dtype) - xp.eye(n, dtype=lower.dtype) * 0.5
        lower_inv = inv(lower)
        inner = ops.matmul(lower, grad_outputs[0], transa=True) * phi
        s = ops.matmul(ops.matmul(lower_inv, inner, transa=True), lower_inv)
        return ((s + ops.transpose(s)) * 0.5,)


def cholesky(a):
    """Cholesky factor of the symmetric positive-definite matrix ``a``.

    Returns the lower-triangular ``L`` with ``L @ L.T == a``. The forward
    pass reads only the lower triangle of ``a`` (as NumPy does), but ``a`` is
    taken to be symmetric: its gradient is the symmetric matrix
    ``(S + S.T) / 2`` with ``S = L^-T Phi(L^T gL) L^-1``, where ``Phi`` keeps
    the lower triangle and halves the diagonal (as in Chainer and PyTorch).
    It is the gradient along symmetric perturbations of ``a``; to
    differentiate through a matrix that is not symmetric, symmetrize it
    first, e.g. ``cholesky((a + a.T) / 2)``.

    Args:
        a (Variable or array): matrix of shape ``(n, n)``, float32 or
            float64 (float16 is rejected: NumPy's and CuPy's linear algebra
            do not support it, so neither did Chainer).

    Returns:
        Variable: ``L``, of shape ``(n, n)`` and ``a``'s dtype.

    Raises:
        ValueError: on the CPU, when ``a`` is not positive definite.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32)).array
    array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    return Cholesky().apply((a,))[0]
