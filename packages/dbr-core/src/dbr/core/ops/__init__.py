"""The primitive differentiable functions that dbr.core needs on its own.

They back Variable's operators and the gradients of broadcasting. The
function library, ``dbr.functions``, re-exports them rather than rewriting them.
"""

from dbr.core.ops.arithmetic import (
    absolute,
    add,
    div,
    log,
    mul,
    neg,
    pow,
    rdiv,
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

__all__ = [
    "absolute",
    "add",
    "broadcast_to",
    "cast",
    "copy",
    "div",
    "get_item",
    "identity",
    "log",
    "matmul",
    "mul",
    "neg",
    "pow",
    "rdiv",
    "reshape",
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


def install_variable_operators(cls):
    """Bind the operators of :class:`dbr.core.Variable` to the functions above."""
    cls.__add__ = add
    cls.__radd__ = _radd
    cls.__sub__ = sub
    cls.__rsub__ = rsub
    cls.__mul__ = mul
    cls.__rmul__ = _rmul
    cls.__truediv__ = div
    cls.__rtruediv__ = rdiv
    cls.__pow__ = pow
    cls.__rpow__ = rpow
    cls.__matmul__ = matmul
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = neg
    cls.__abs__ = absolute
    cls.__getitem__ = get_item
