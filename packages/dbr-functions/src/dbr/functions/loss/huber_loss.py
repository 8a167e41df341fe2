"""huber_loss: squared error near zero, absolute error beyond ``delta``."""

import numbers

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array, force_type

_REDUCE = ("sum_along_second_axis", "no")


class HuberLoss(FunctionNode):
    """Elementwise Huber loss of ``x - t``, optionally summed along axis 1."""

    def __init__(self, delta, reduce="sum_along_second_axis"):
        if reduce not in _REDUCE:
            raise ValueError(
                f"huber_loss: expected reduce to be 'sum_along_second_axis' or 'no', "
                f"got {reduce!r}"
            )
        if (
            not isinstance(delta, numbers.Real)
            or isinstance(delta, bool)
            or not numpy.isfinite(delta)
            or delta <= 0
        ):
            raise ValueError(f"huber_loss: expected delta to be a positive number, got {delta!r}")
        self.delta = float(delta)
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t"))
        x, t = in_types
        type_check.expect(x.dtype.kind == "f", x.dtype == t.dtype, x.shape == t.shape)
        if self.reduce == "sum_along_second_axis":
            type_check.expect(x.ndim >= 2)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, t = inputs
        xp = backend.get_array_module(x)
        delta = force_type(x.dtype, self.delta)
        # With m = min(|d|, delta), m * (|d| - m / 2) is d**2 / 2 inside and
        # delta * (|d| - delta / 2) outside.
        a = force_array(x - t)
        xp.abs(a, out=a)
        m = force_array(xp.minimum(a, delta))
        y = force_array(m * x.dtype.type(0.5))
        xp.subtract(a, y, out=y)
        y *= m
        if self.reduce == "sum_along_second_axis":
            acc = numpy.float32 if x.dtype == numpy.float16 else x.dtype
            y = force_array(y.sum(axis=1, dtype=acc), x.dtype)
        return (y,)

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        gx = HuberLossGrad(self.delta, self.reduce).apply((x, t, grad_outputs[0]))[0]
        return tuple([gx if i == 0 else -gx for i in indexes])


def _expand_second_axis(gy, reduce):
    """``gy`` with the summed axis 1 restored as length 1 (a view)."""
    if reduce != "sum_along_second_axis":
        return gy
    return gy.reshape(gy.shape[:1] + (1,) + gy.shape[1:])


class HuberLossGrad(FunctionNode):
    """``gy * clip(x - t, -delta, delta)``: the gradient of the Huber loss by ``x``."""

    def __init__(self, delta, reduce):
        self.delta = delta
        self.reduce = reduce

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, t, gy = inputs
        xp = backend.get_array_module(x)
        delta = force_type(x.dtype, self.delta)
        gx = force_array(x - t)
        xp.clip(gx, -delta, delta, out=gx)
        gx *= _expand_second_axis(gy, self.reduce)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x, t, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        xp = x.xp
        diff = force_array(x.array - t.array)
        inside = xp.abs(diff) < force_type(diff.dtype, self.delta)
        ret = []
        g_x = None
        for i in indexes:
            if i == 2:
                clipped = xp.clip(diff, -self.delta, self.delta).astype(diff.dtype, copy=False)
                g = ggx * clipped
                if self.reduce == "sum_along_second_axis":
                    g = ops.sum(g, axis=1)
                ret.append(g)
                continue
            if g_x is None:
                gy_b = gy
                if self.reduce == "sum_along_second_axis":
                    gy_b = ops.reshape(gy, _expand_second_axis(gy.array, self.reduce).shape)
                g_x = ggx * gy_b * inside.astype(diff.dtype)
            ret.append(g_x if i == 0 else -g_x)
        return tuple(ret)


def huber_loss(x, t, delta, reduce="sum_along_second_axis"):
    """Huber loss: squared error for small differences, absolute error for large ones.

    With ``d = x - t`` elementwise,

    .. math::
        L_\\delta(d) = \\begin{cases} d^2 / 2 & |d| \\le \\delta \\\\
        \\delta (|d| - \\delta / 2) & \\text{otherwise.} \\end{cases}

    Args:
        x (Variable or array): float16, float32 or float64 array; at least
            2-d when ``reduce`` is ``'sum_along_second_axis'``.
        t (Variable or array): an array of the same shape and dtype as ``x``.
        delta (float): the positive threshold between the two regimes.
        reduce (str): ``'sum_along_second_axis'`` sums the loss over axis 1;
            ``'no'`` returns the elementwise loss.

    Returns:
        Variable: of shape ``x.shape`` without axis 1 (``'sum_along_second_axis'``)
        or ``x.shape`` (``'no'``), and of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[-2.0, 0.5], [1.0, 3.0]], np.float32)
    >>> t = np.zeros((2, 2), np.float32)
    >>> huber_loss(x, t, delta=1.0).array
    array([1.625, 3.   ], dtype=float32)
    >>> huber_loss(x, t, delta=1.0, reduce='no').array
    array([[1.5  , 0.125],
           [0.5  , 2.5  ]], dtype=float32)
    """
    return HuberLoss(delta, reduce).apply((x, t))[0]
