"""Rounding: ceil, floor and fix (round toward zero).

As in Chainer, these are not differentiable: each returns a new Variable
that does not require a gradient and has no creator, so backprop stops at it
(the inputs receive no gradient through it).
"""

from dbr.core import Variable, backend
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions._invalid_type import invalid_type

# The argument and result that ceil, floor, fix and sign share (see dbr.functions._docs.fill).
DOCS = {
    "args_numeric_no_grad": """\
Args:
    x (Variable or array): input of a floating or integer dtype.

Returns:
    Variable: of ``x``'s shape and dtype, with ``requires_grad=False``.""",
}


def _input_array(x, name):
    """The array of ``x`` (a Variable or array) after checking it is numeric."""
    array = x.array if isinstance(x, Variable) else x
    if not isinstance(array, backend.get_array_types()):
        raise TypeError(
            f"{name}: expected x to be a Variable, numpy.ndarray or cupy.ndarray, "
            f"got {type(x).__name__}"
        )
    kind = array.dtype.kind
    if kind not in "fiu":
        expect = "x.dtype.kind in 'fiu'"
        actual = f"x.dtype.kind == {kind!r} (x.dtype == {array.dtype})"
        raise invalid_type(name, expect, actual, forward=False)
    return array


def _apply_without_gradient(x, name):
    """``xp.<name>(x)`` as a new Variable with no creator and ``requires_grad=False``."""
    array = _input_array(x, name)
    xp = backend.get_array_module(array)
    return Variable(force_array(getattr(xp, name)(array), array.dtype), requires_grad=False)


@fill(**DOCS)
def ceil(x):
    """Elementwise ceiling, :math:`y_i = \\lceil x_i \\rceil`.

    Not differentiable: the result requires no gradient and backprop stops
    at it.

    {args_numeric_no_grad}

    >>> import numpy as np
    >>> ceil(np.array([-1.5, 0.2, 2.0], np.float32)).array
    array([-1.,  1.,  2.], dtype=float32)
    """
    return _apply_without_gradient(x, "ceil")


@fill(**DOCS)
def floor(x):
    """Elementwise floor, :math:`y_i = \\lfloor x_i \\rfloor`.

    Not differentiable: the result requires no gradient and backprop stops
    at it.

    {args_numeric_no_grad}

    >>> import numpy as np
    >>> floor(np.array([-1.5, 0.2, 2.0], np.float32)).array
    array([-2.,  0.,  2.], dtype=float32)
    """
    return _apply_without_gradient(x, "floor")


@fill(**DOCS)
def fix(x):
    """Elementwise rounding toward zero (the integer part of each element).

    .. math::
        y_i = \\operatorname{sgn}(x_i) \\lfloor |x_i| \\rfloor

    Not differentiable: the result requires no gradient and backprop stops
    at it.

    {args_numeric_no_grad}

    >>> import numpy as np
    >>> fix(np.array([-1.5, 0.2, 2.7], np.float32)).array
    array([-1.,  0.,  2.], dtype=float32)
    """
    return _apply_without_gradient(x, "fix")
