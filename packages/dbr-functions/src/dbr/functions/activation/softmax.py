"""softmax: normalized exponentials along an axis."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.functions._docs import fill


def check_axis(axis, who):
    """Raise a TypeError naming ``who`` unless ``axis`` is an int."""
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise TypeError(f"{who}: expected axis to be an int, got {axis!r}")
    return int(axis)


def check_float_input_with_axis(in_types, axis, nonempty=False):
    """The type check of a floating input ``x`` with an axis ``axis``.

    With ``nonempty``, ``x`` must also have elements along ``axis`` (to be
    reduced over it).
    """
    type_check.argname(in_types, ("x",))
    x_type = in_types[0]
    type_check.expect(x_type.dtype.kind == "f", -x_type.ndim <= axis, x_type.ndim > axis)
    if nonempty:
        type_check.expect(x_type.shape[axis] > 0)


# Passages of softmax's and log_softmax's docstrings (see dbr.functions._docs.fill).
DOCS = {
    "x_and_axis": """\
x (Variable or array): input of a floating dtype (float16, float32 or
    float64) with at least one axis, e.g. ``(batch, classes)``.
axis (int): the axis along which to normalize (negative counts from
    the last axis).""",
    "axis_raises": """\
Raises:
    TypeError: ``axis`` is not an int.
    InvalidType: ``x`` is not floating, or ``axis`` is not one of its
        axes or has length 0.""",
}


class NormalizedAlongAxis(FunctionNode):
    """Base of softmax and log_softmax: ``x`` less its maximum along ``axis``, then normalized.

    A subclass names itself in ``who``, normalizes the shifted array in place
    in ``normalize(xp, y, axis)`` (float32 for a float16 ``x``) and names in
    ``grad`` its gradient node, applied to the retained output and ``gy``.
    """

    who = None
    grad = None

    def __init__(self, axis=1):
        self.axis = check_axis(axis, self.who)

    def check_type_forward(self, in_types):
        check_float_input_with_axis(in_types, self.axis, nonempty=True)

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        axis = self.axis
        if x.dtype == numpy.float16:
            y = x.astype(numpy.float32)
            y -= y.max(axis=axis, keepdims=True)
        else:
            y = x - x.max(axis=axis, keepdims=True)
        self.normalize(xp, y, axis)
        if x.dtype == numpy.float16:
            y = y.astype(numpy.float16)
        self.retain_outputs((0,))
        return (y,)

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return self.grad(self.axis).apply((y, grad_outputs[0]))


class SoftmaxGrad(FunctionNode):
    """``y * (gy - sum(y * gy, axis))`` from the output ``y`` of softmax and its gradient ``gy``.

    Linear in ``gy`` and symmetric, so its gradient with respect to ``gy``
    is itself.
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, gy = inputs
        xp = backend.get_array_module(y)
        gx = y * gy
        if gx.dtype == numpy.float16:
            s = gx.sum(axis=self.axis, keepdims=True, dtype=numpy.float32)
        else:
            s = gx.sum(axis=self.axis, keepdims=True)
        xp.subtract(gy, s, out=gx, casting="same_kind")
        gx *= y
        return (gx,)

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        axis = self.axis
        ret = []
        for i in indexes:
            if i == 0:
                centered_gy = gy - ops.sum(y * gy, axis=axis, keepdims=True)
                ret.append(ggx * centered_gy - gy * ops.sum(ggx * y, axis=axis, keepdims=True))
            else:
                ret.append(SoftmaxGrad(axis).apply((y, ggx))[0])
        return tuple(ret)


class Softmax(NormalizedAlongAxis):
    """``exp(x) / sum(exp(x), axis)``, computed after subtracting the maximum along ``axis``."""

    grad = SoftmaxGrad
    who = "softmax"

    @staticmethod
    def normalize(xp, y, axis):
        """``y = exp(y) / sum(exp(y), axis)``, in place."""
        xp.exp(y, out=y)
        y /= y.sum(axis=axis, keepdims=True)


@fill(**DOCS)
def softmax(x, axis=1):
    """Softmax along ``axis``: :math:`y_i = \\exp(x_i) / \\sum_j \\exp(x_j)`.

    The maximum along ``axis`` is subtracted before exponentiating, so large
    inputs do not overflow; float16 inputs are computed in float32.

    Args:
        {x_and_axis}

    Returns:
        Variable: of ``x``'s shape and dtype; it sums to 1 along ``axis``.

    {axis_raises}

    >>> import numpy as np
    >>> softmax(np.array([[0.0, 1.0, 2.0]], np.float32)).array.round(4)
    array([[0.09  , 0.2447, 0.6652]], dtype=float32)
    """
    return Softmax(axis).apply((x,))[0]
