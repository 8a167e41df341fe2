"""inv and batch_inv: inverses of square matrices."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module

_float16 = numpy.dtype(numpy.float16)


def invert(a, who):
    """The inverse of each matrix in the last two axes of ``a`` (float16 computed in float32).

    Raises a ValueError naming ``who`` when NumPy finds a singular matrix.
    """
    xp = get_array_module(a)
    work = a.astype(numpy.float32) if a.dtype == _float16 else a
    try:
        inv = xp.linalg.inv(work)
    except numpy.linalg.LinAlgError as e:
        raise ValueError(f"{who}: the input has a singular matrix ({e})") from None
    return inv.astype(a.dtype, copy=False)


class SquareMatricesFunction(FunctionNode):
    """A function of one floating input of square matrices in its last two axes.

    Subclasses set ``_ndim``: 2 for one matrix, 3 for a batch of them.
    """

    _ndim = None

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a",))
        a_type = in_types[0]
        type_check.expect(
            a_type.dtype.kind == "f",
            a_type.ndim == self._ndim,
            a_type.shape[-1] == a_type.shape[-2],
        )


class _InvBase(SquareMatricesFunction):
    _name = None

    def forward(self, inputs):
        self.retain_outputs((0,))
        return (invert(inputs[0], self._name),)

    def backward(self, indexes, grad_outputs):
        # d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T gY A^-T.
        inv = self.get_retained_outputs()[0]
        g = ops.matmul(inv, grad_outputs[0], transa=True)
        return (-ops.matmul(g, inv, transb=True),)


class Inv(_InvBase):
    """The inverse of one square matrix."""

    _ndim = 2
    _name = "inv"


class BatchInv(_InvBase):
    """The inverses of a batch of square matrices."""

    _ndim = 3
    _name = "batch_inv"


def inv(a):
    """Inverse of the square matrix ``a``.

    Args:
        a (Variable or array): matrix of shape ``(n, n)``, float16, float32
            or float64 (float16 is inverted in float32, as in Chainer).

    Returns:
        Variable: ``a``'s inverse, of shape ``(n, n)`` and ``a``'s dtype.

    Raises:
        ValueError: on the CPU, when ``a`` is singular.

    >>> import numpy as np
    >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]], np.float32)).array
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    return Inv().apply((a,))[0]


def batch_inv(a):
    """Inverses of a batch of square matrices.

    Args:
        a (Variable or array): matrices of shape ``(m, n, n)``, float16,
            float32 or float64 (float16 is inverted in float32).

    Returns:
        Variable: the inverse of each matrix, of shape ``(m, n, n)`` and
        ``a``'s dtype.

    Raises:
        ValueError: on the CPU, when one of the matrices is singular.

    >>> import numpy as np
    >>> batch_inv(np.stack([np.eye(2), 2 * np.eye(2)]).astype(np.float32)).array[1]
    array([[0.5, 0. ],
           [0. , 0.5]], dtype=float32)
    """
    return BatchInv().apply((a,))[0]
