"""matmul: matrix product with NumPy's stacking and broadcasting rules."""

import numpy

from dbr.core import backend, type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import force_array
from dbr.core.ops.broadcast import sum_to
from dbr.core.ops.shape import reshape, transpose
from dbr.core.utils import accumulation_dtype

_ndarray = numpy.ndarray


def _swap_last(x):
    return x.swapaxes(-1, -2) if x.ndim >= 2 else x


def _swap_last_var(x):
    ndim = x.ndim
    if ndim < 2:
        return x
    axes = list(range(ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return transpose(x, tuple(axes))


class MatMul(FunctionNode):
    """``a @ b``, optionally transposing the last two axes of either operand first.

    The operands may have different floating dtypes; the product has
    ``dtype`` (None: NumPy's promotion of the two).
    """

    def __init__(self, transa=False, transb=False, dtype=None):
        self.transa = transa
        self.transb = transb
        self.dtype = None if dtype is None else numpy.dtype(dtype)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a", "b"))
        a, b = in_types
        type_check.expect(a.dtype.kind == "f", b.dtype.kind == "f", a.ndim >= 1, b.ndim >= 1)
        a_shape = type_check.eval(a.shape)
        b_shape = type_check.eval(b.shape)
        if self.transa and len(a_shape) >= 2:
            a_shape = a_shape[:-2] + (a_shape[-1], a_shape[-2])
        if self.transb and len(b_shape) >= 2:
            b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
        k_b = b_shape[-2] if len(b_shape) >= 2 else b_shape[0]
        if a_shape[-1] != k_b:
            raise type_check.InvalidType(
                "a.shape[-1] == b.shape[-2] (after transa/transb)",
                f"a.shape == {type_check.eval(a.shape)}, b.shape == {type_check.eval(b.shape)}",
            )
        if len(a_shape) > 2 or len(b_shape) > 2:
            type_check.expect_broadcast_shapes(a_shape[:-2], b_shape[:-2])

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b = inputs
        if self.transa:
            a = _swap_last(a)
        if self.transb:
            b = _swap_last(b)
        xp = numpy if type(a) is _ndarray else backend.get_array_module(a)
        if a.dtype != b.dtype:
            # float16 meets the other operand in float32 at least: BLAS has no half GEMM.
            common = accumulation_dtype(a.dtype, b.dtype)
            y = xp.matmul(a.astype(common, copy=False), b.astype(common, copy=False))
            return (force_array(y, self.dtype or numpy.result_type(a.dtype, b.dtype)),)
        return (force_array(xp.matmul(a, b), self.dtype),)

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        gy = grad_outputs[0]
        a_eff = _swap_last_var(a) if self.transa else a
        b_eff = _swap_last_var(b) if self.transb else b
        a2 = reshape(a_eff, (1,) + a_eff.shape) if a_eff.ndim == 1 else a_eff
        b2 = reshape(b_eff, b_eff.shape + (1,)) if b_eff.ndim == 1 else b_eff
        gy_shape = list(gy.shape)
        if a_eff.ndim == 1:
            gy_shape.insert(len(gy_shape) - (0 if b_eff.ndim == 1 else 1), 1)
        if b_eff.ndim == 1:
            gy_shape.append(1)
        gy2 = reshape(gy, tuple(gy_shape))
        ret = []
        for i in indexes:
            if i == 0:
                g = MatMul(transb=True, dtype=a.dtype).apply((gy2, b2))[0]
                g = sum_to(g, a2.shape)
                g = reshape(g, a_eff.shape)
                ret.append(_swap_last_var(g) if self.transa else g)
            else:
                g = MatMul(transa=True, dtype=b.dtype).apply((a2, gy2))[0]
                g = sum_to(g, b2.shape)
                g = reshape(g, b_eff.shape)
                ret.append(_swap_last_var(g) if self.transb else g)
        return tuple(ret)


def matmul(a, b, transa=False, transb=False):
    """Matrix product of ``a`` and ``b``.

    Two 1-D inputs give their dot product, 2-D inputs the matrix product, and
    inputs with more axes are stacks of matrices in their last two axes,
    broadcast against each other.

    Args:
        a (Variable or array): left operand, floating dtype.
        b (Variable or array): right operand, floating dtype (not
            necessarily ``a``'s).
        transa (bool): transpose the last two axes of ``a`` first.
        transb (bool): transpose the last two axes of ``b`` first.

    Returns:
        Variable: the product, of the dtype NumPy's promotion gives ``a`` and
        ``b``; each gradient has its input's dtype.

    >>> import numpy as np
    >>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).shape
    (2, 4)
    """
    return MatMul(transa, transb).apply((a, b))[0]
