"""local_response_normalization: normalization across neighbouring channels (AlexNet's LRN)."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.normalization._statistics import compute_dtype
from dbr.functions.normalization.batch_normalization import check_real


def window_sum(a, half):
    """Sum of ``a`` over the channels ``c - half .. c + half`` (axis 1), zero outside."""
    out = a.copy()
    channels = a.shape[1]
    for i in range(1, min(half, channels - 1) + 1):
        out[:, i:] += a[:, :-i]
        out[:, :-i] += a[:, i:]
    return out


class ChannelWindowSum(FunctionNode):
    """:func:`window_sum` as a function; the window is symmetric, so it is its own transpose."""

    def __init__(self, half):
        self.half = half

    def forward(self, inputs):
        return (window_sum(inputs[0], self.half),)

    def backward(self, indexes, grad_outputs):
        return ChannelWindowSum(self.half).apply(grad_outputs)


class _LRNScale(FunctionNode):
    """``k + alpha * window_sum(x ** 2)`` in the compute dtype, reusing the forward's array."""

    def __init__(self, half, k, alpha, dtype, scale=None):
        self.half = half
        self.k = k
        self.alpha = alpha
        self.dtype = dtype
        self.scale = scale

    def forward(self, inputs):
        self.retain_inputs((0,))
        if self.scale is not None:
            return (self.scale,)
        return (_scale(inputs[0].astype(self.dtype, copy=False), self.half, self.k, self.alpha),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        window = ChannelWindowSum(self.half).apply(grad_outputs)[0]
        gx = ops.cast(x, self.dtype) * window * (2.0 * self.alpha)
        return (ops.cast(gx, x.dtype),)


def _scale(x, half, k, alpha):
    xp = get_array_module(x)
    s = window_sum(xp.square(x), half)
    s *= x.dtype.type(alpha)
    s += x.dtype.type(k)
    return s


class LocalResponseNormalization(FunctionNode):
    """``x / (k + alpha * sum of x ** 2 over n neighbouring channels) ** beta``."""

    def __init__(self, n=5, k=2, alpha=1e-4, beta=0.75):
        who = "local_response_normalization"
        if not isinstance(n, (int, numpy.integer)) or isinstance(n, bool):
            raise TypeError(f"{who}: expected n to be an int, got {n!r}")
        if n < 1:
            raise ValueError(f"{who}: expected n >= 1, got {n}")
        for name, value in (("k", k), ("alpha", alpha), ("beta", beta)):
            check_real(value, name, who)
        self.half = int(n) // 2
        self.k = k
        self.alpha = alpha
        self.beta = beta
        self.scale = None

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        type_check.expect(in_types[0].dtype.kind == "f", in_types[0].ndim >= 2)

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x = inputs[0]
        dtype = compute_dtype(x.dtype)
        xc = x.astype(dtype, copy=False)
        scale = _scale(xc, self.half, self.k, self.alpha)
        y = scale ** dtype.type(-self.beta)
        y *= xc
        self.scale = scale
        return (y.astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        y = self.get_retained_outputs()[0]
        dtype = self.scale.dtype
        scale = _LRNScale(self.half, self.k, self.alpha, dtype, self.scale).apply((x,))[0]
        g = ops.cast(grad_outputs[0], dtype)
        # gx = gy * s ** -beta - 2 alpha beta x * window_sum(gy * y / s).
        window = ChannelWindowSum(self.half).apply((g * ops.cast(y, dtype) / scale,))[0]
        gx = g * scale ** (-self.beta) - ops.cast(x, dtype) * window * (
            2.0 * self.alpha * self.beta
        )
        return (ops.cast(gx, x.dtype),)


def local_response_normalization(x, n=5, k=2, alpha=1e-4, beta=0.75):
    """Local response normalization across channels.

    For ``x`` of shape ``(N, C, ...)``, with :math:`h = \\lfloor n / 2 \\rfloor`,

    .. math::

        y_{nc\\ldots} = x_{nc\\ldots} \\Big/ \\Big(k + \\alpha
        \\sum_{j = \\max(0, c - h)}^{\\min(C - 1, c + h)} x_{nj\\ldots}^2\\Big)^\\beta.

    float16 is computed in float32. Differentiable any number of times.

    Args:
        x (Variable or array): input with at least two axes (the second is
            the channel axis), floating.
        n (int): the size of the channel window (its half, ``n // 2``,
            counts on each side).
        k (float): the constant added to the sum.
        alpha (float): the factor of the sum.
        beta (float): the exponent.

    Returns:
        Variable: of ``x``'s shape and dtype.

    See: Krizhevsky et al., *ImageNet Classification with Deep Convolutional
    Neural Networks*, section 3.3.

    >>> import numpy as np
    >>> x = np.ones((1, 3), np.float32)
    >>> local_response_normalization(x, n=3, k=1, alpha=1, beta=1).array
    array([[0.33333334, 0.25      , 0.33333334]], dtype=float32)
    """
    return LocalResponseNormalization(n, k, alpha, beta).apply((x,))[0]
