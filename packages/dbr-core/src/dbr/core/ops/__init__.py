"""The primitive differentiable functions that dbr.core needs on its own.

They back Variable's operators and the gradients of broadcasting. The
function library, ``dbr.functions``, re-exports them rather than rewriting them.
Importing this package binds Variable's operators and its ``T``, ``reshape``,
``transpose`` and ``mean`` to these functions, so that ``dbr.core.variable`` needs no
import of them.
"""

from dbr.core.ops._mean import variable_mean
from dbr.core.ops.arithmetic import (
    absolute,
    add,
    div,
    floordiv,
    log,
    mul,
    neg,
    pow,
    rdiv,
    rfloordiv,
    rpow,
    rsub,
    sub,
)
from dbr.core.ops.broadcast import broadcast_to, sum_to
from dbr.core.ops.cast import cast, copy, identity
from dbr.core.ops.get_item import get_item
from dbr.core.ops.matmul import matmul
from dbr.core.ops.shape import reshape, transpose
from dbr.core.ops.sum import sum
from dbr.core.variable import Variable

__all__ = [
    "absolute",
    "add",
    "broadcast_to",
    "cast",
    "copy",
    "div",
    "floordiv",
    "get_item",
    "identity",
    "log",
    "matmul",
    "mul",
    "neg",
    "pow",
    "rdiv",
    "reshape",
    "rfloordiv",
    "rpow",
    "rsub",
    "sub",
    "sum",
    "sum_to",
    "transpose",
]


def _radd(self, other):
    return add(self, other)


def _rmul(self, other):
    return mul(self, other)


def _rmatmul(self, other):
    return matmul(other, self)


def _transpose_all(self):
    """The transpose (reversed axes)."""
    return transpose(self)


def _reshape_method(self, *shape):
    """Return a Variable of the same data with a new shape (``-1`` infers one axis)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return reshape(self, tuple(shape))


def _transpose_method(self, *axes):
    """Permute the axes (reversed if none are given)."""
    if len(axes) == 1 and (isinstance(axes[0], (tuple, list)) or axes[0] is None):
        axes = axes[0]
    return transpose(self, tuple(axes) if axes else None)


def install_variable_operators(cls):
    """Bind the operators of :class:`dbr.core.Variable` (and ``T``, ``reshape``,
    ``transpose``, ``mean``) to the functions above."""
    cls.__add__ = add
    cls.__radd__ = _radd
    cls.__sub__ = sub
    cls.__rsub__ = rsub
    cls.__mul__ = mul
    cls.__rmul__ = _rmul
    cls.__truediv__ = div
    cls.__rtruediv__ = rdiv
    cls.__floordiv__ = floordiv
    cls.__rfloordiv__ = rfloordiv
    cls.__pow__ = pow
    cls.__rpow__ = rpow
    cls.__matmul__ = matmul
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = neg
    cls.__abs__ = absolute
    cls.__getitem__ = get_item
    cls.T = property(_transpose_all)
    cls.reshape = _reshape_method
    cls.transpose = _transpose_method
    cls.mean = variable_mean


install_variable_operators(Variable)
