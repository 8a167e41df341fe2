"""normalize: L2 normalization of vectors along axes."""

from dbr.core import FunctionNode, ops
from dbr.core.backend import get_array_module
from dbr.functions.math._axes import check_float_input_axes, normalize_axis
from dbr.functions.math.sqrt import sqrt
from dbr.functions.normalization._statistics import compute_dtype
from dbr.functions.normalization.batch_normalization import check_real


class NormalizeL2(FunctionNode):
    """``x / (||x||_2 + eps)`` with the norm taken over ``axis`` (kept for broadcasting)."""

    def __init__(self, eps=1e-5, axis=1):
        self.eps = eps
        self.axis = normalize_axis(axis, "normalize")
        if self.axis is None:
            raise TypeError("normalize: expected axis to be an int or a tuple of ints, got None")

    def check_type_forward(self, in_types):
        check_float_input_axes(in_types, self.axis)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = get_array_module(x)
        dtype = compute_dtype(x.dtype)
        xc = x.astype(dtype, copy=False)
        norm = xp.sqrt(xp.square(xc).sum(axis=self.axis, keepdims=True))
        norm += dtype.type(self.eps)
        return ((xc / norm).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        dtype = compute_dtype(x.dtype)
        xc = ops.cast(x, dtype)
        g = ops.cast(grad_outputs[0], dtype)
        norm = sqrt(ops.sum(xc * xc, axis=self.axis, keepdims=True))
        denom = norm + self.eps
        # gx = gy / denom - x * sum(gy * x) / (norm * denom ** 2); the second term is 0 for
        # zero vectors, where x is 0: a norm of 1 there keeps it finite.
        safe_norm = norm + (norm.array == 0).astype(dtype)
        coefficient = ops.sum(g * xc, axis=self.axis, keepdims=True) / (safe_norm * denom * denom)
        gx = g / denom - xc * coefficient
        return (ops.cast(gx, x.dtype),)


def normalize(x, eps=1e-5, axis=1):
    """L2 normalization of ``x`` along ``axis``.

    .. math::

        y = \\frac{x}{\\|x\\|_2 + \\epsilon},

    where the norm is taken over ``axis`` separately for every index of the
    other axes (for ``x`` of shape ``(N, K)`` and ``axis=1``, each row is
    divided by its norm). No reduction happens: ``y`` has ``x``'s shape. At
    a zero vector the gradient is ``gy / eps``. float16 is computed in
    float32. Differentiable any number of times, except that second
    derivatives are not defined at zero vectors.

    Args:
        x (Variable or array): input of a floating dtype.
        eps (float): added to the norm, to avoid division by zero.
        axis (int or tuple of int): the axes of the vectors (negative values
            count from the last axis).

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> normalize(np.array([[3.0, 4.0]], np.float32), eps=0.0).array
    array([[0.6, 0.8]], dtype=float32)
    """
    check_real(eps, "eps", "normalize", 0)
    return NormalizeL2(eps, axis).apply((x,))[0]
