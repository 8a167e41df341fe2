"""max, min, argmax and argmin over axes."""

import numpy

from dbr.core import FunctionNode, ops
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.math._axes import (
    Reduction,
    check_float_input_axes,
    check_nonempty_reduction,
    kept_shape,
    normalize_single_axis,
)

# The arguments of max and min (see dbr.functions._docs.fill).
DOCS = {
    "args_reduce": """\
Args:
    x (Variable or array): input of a floating dtype (float16, float32 or
        float64), with at least one element along each reduced axis.
    axis (None, int or tuple of int): the axes to reduce (all if None);
        negative values count from the last axis.
    keepdims (bool): keep the reduced axes with length one.""",
}


class _Selector(Reduction):
    """Base of Max and Min: one element selected over some axes."""

    _reduce = None
    nonempty = True

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x = inputs[0]
        reduce = getattr(get_array_module(x), self._reduce)
        return (force_array(reduce(x, axis=self.axis, keepdims=self.keepdims)),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array
        y = self.get_retained_outputs()[0].array
        shape = kept_shape(x.shape, self.axis)
        # Every element equal to the selected value receives the gradient (as in Chainer).
        mask = (x == y.reshape(shape)).astype(x.dtype)
        gy = ops.broadcast_to(ops.reshape(grad_outputs[0], shape), x.shape)
        return (gy * mask,)


class Max(_Selector):
    """The maximum over some axes (all by default)."""

    _reduce = "amax"
    who = "max"


class Min(_Selector):
    """The minimum over some axes (all by default)."""

    _reduce = "amin"
    who = "min"


class _IndexSelector(FunctionNode):
    """Base of ArgMax and ArgMin: the int32 index of the selected element (not differentiable)."""

    _reduce = None
    _name = None

    def __init__(self, axis=None):
        self.axis = normalize_single_axis(axis, self._name)

    def check_type_forward(self, in_types):
        axes = None if self.axis is None else (self.axis,)
        check_float_input_axes(in_types, axes)
        check_nonempty_reduction(in_types[0], axes)

    def forward(self, inputs):
        x = inputs[0]
        reduce = getattr(get_array_module(x), self._reduce)
        return (force_array(reduce(x, axis=self.axis).astype(numpy.int32, copy=False)),)

    def backward(self, indexes, grad_outputs):
        return (None,)


class ArgMax(_IndexSelector):
    """The index of the maximum along an axis (of the flattened array by default)."""

    _reduce = "argmax"
    _name = "argmax"


class ArgMin(_IndexSelector):
    """The index of the minimum along an axis (of the flattened array by default)."""

    _reduce = "argmin"
    _name = "argmin"


@fill(**DOCS)
def max(x, axis=None, keepdims=False):  # Chainer's name
    """Maximum of the elements of ``x`` over ``axis``.

    The gradient flows to every element equal to the maximum (to all of them
    when several tie).

    {args_reduce}

    Returns:
        Variable: the maxima, of ``x``'s dtype.

    >>> import numpy as np
    >>> max(np.array([[1.0, 3.0], [4.0, 2.0]], np.float32), axis=1).array
    array([3., 4.], dtype=float32)
    """
    return Max(axis, keepdims).apply((x,))[0]


@fill(**DOCS)
def min(x, axis=None, keepdims=False):  # Chainer's name
    """Minimum of the elements of ``x`` over ``axis``.

    The gradient flows to every element equal to the minimum (to all of them
    when several tie).

    {args_reduce}

    Returns:
        Variable: the minima, of ``x``'s dtype.

    >>> import numpy as np
    >>> min(np.array([[1.0, 3.0], [4.0, 2.0]], np.float32), axis=0).array
    array([1., 2.], dtype=float32)
    """
    return Min(axis, keepdims).apply((x,))[0]


def argmax(x, axis=None):
    """Index of the maximum of ``x`` along ``axis`` (the first one when several tie).

    Not differentiable: backprop stops at its output.

    Args:
        x (Variable or array): input of a floating dtype.
        axis (None or int): the axis to search; None searches the flattened
            input and returns a flat index.

    Returns:
        Variable: int32 indexes, of ``x``'s shape without ``axis`` (0-d for None).

    >>> import numpy as np
    >>> argmax(np.array([[1.0, 3.0], [4.0, 2.0]], np.float32), axis=1).array
    array([1, 0], dtype=int32)
    """
    return ArgMax(axis).apply((x,))[0]


def argmin(x, axis=None):
    """Index of the minimum of ``x`` along ``axis`` (the first one when several tie).

    Not differentiable: backprop stops at its output.

    Args:
        x (Variable or array): input of a floating dtype.
        axis (None or int): the axis to search; None searches the flattened
            input and returns a flat index.

    Returns:
        Variable: int32 indexes, of ``x``'s shape without ``axis`` (0-d for None).

    >>> import numpy as np
    >>> argmin(np.array([[1.0, 3.0], [4.0, 2.0]], np.float32)).array
    array(0, dtype=int32)
    """
    return ArgMin(axis).apply((x,))[0]
