"""batch_matmul: Chainer's deprecated batched matrix product (use matmul instead)."""

import warnings

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module


def _as_batch_of_matrices(shape):
    """A 2-D shape ``(B, N)`` is B column vectors ``(B, N, 1)``; 3-D shapes stay."""
    return shape if len(shape) == 3 else shape + (1,)


class BatchMatMul(FunctionNode):
    """``op(a[i]) @ op(b[i])`` for each ``i``; 2-D operands are batches of column vectors."""

    def __init__(self, transa=False, transb=False):
        self.transa = transa
        self.transb = transb

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a", "b"))
        a_type, b_type = in_types
        type_check.expect(
            a_type.dtype.kind == "f",
            b_type.dtype == a_type.dtype,
            a_type.ndim >= 2,
            a_type.ndim <= 3,
            b_type.ndim >= 2,
            b_type.ndim <= 3,
            a_type.shape[0] == b_type.shape[0],
        )
        a_shape = _as_batch_of_matrices(type_check.eval(a_type.shape))
        b_shape = _as_batch_of_matrices(type_check.eval(b_type.shape))
        a_inner = a_shape[1] if self.transa else a_shape[2]
        b_inner = b_shape[2] if self.transb else b_shape[1]
        if a_inner != b_inner:
            raise type_check.InvalidType(
                "the inner sizes of op(a) and op(b) agree (2-D operands are (B, N, 1))",
                f"a.shape == {type_check.eval(a_type.shape)}, "
                f"b.shape == {type_check.eval(b_type.shape)}, "
                f"transa={self.transa}, transb={self.transb}",
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b = inputs
        a = a.reshape(_as_batch_of_matrices(a.shape))
        b = b.reshape(_as_batch_of_matrices(b.shape))
        if self.transa:
            a = a.swapaxes(1, 2)
        if self.transb:
            b = b.swapaxes(1, 2)
        return (get_array_module(a).matmul(a, b),)

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        gy = grad_outputs[0]
        a3 = ops.reshape(a, _as_batch_of_matrices(a.shape))
        b3 = ops.reshape(b, _as_batch_of_matrices(b.shape))
        ret = []
        for i in indexes:
            if i == 0:
                if self.transa:
                    g = ops.matmul(b3, gy, transa=self.transb, transb=True)
                else:
                    g = ops.matmul(gy, b3, transb=not self.transb)
                ret.append(ops.reshape(g, a.shape))
            else:
                if self.transb:
                    g = ops.matmul(gy, a3, transa=True, transb=self.transa)
                else:
                    g = ops.matmul(a3, gy, transa=not self.transa)
                ret.append(ops.reshape(g, b.shape))
        return tuple(ret)


def batch_matmul(a, b, transa=False, transb=False):
    """Matrix products of two batches of matrices (deprecated: use ``matmul``).

    ``y[i] = op(a[i]) @ op(b[i])`` where ``op`` transposes when ``transa``
    (``transb``) is set. A 2-D operand of shape ``(B, N)`` is taken as B
    column vectors of shape ``(N, 1)``. Emits a DeprecationWarning, as
    Chainer does.

    Args:
        a (Variable or array): ``(B, M, N)`` matrices or ``(B, N)`` vectors,
            of a floating dtype.
        b (Variable or array): ``(B, N, K)`` matrices or ``(B, N)`` vectors,
            of ``a``'s dtype.
        transa (bool): transpose each matrix of ``a`` first.
        transb (bool): transpose each matrix of ``b`` first.

    Returns:
        Variable: the products, always 3-D.

    >>> import numpy as np
    >>> import warnings
    >>> a = np.ones((2, 3), np.float32)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     batch_matmul(a, a, transa=True).shape
    (2, 1, 1)
    """
    warnings.warn(
        "batch_matmul is deprecated. Use matmul instead.", DeprecationWarning, stacklevel=2
    )
    return BatchMatMul(transa, transb).apply((a, b))[0]
