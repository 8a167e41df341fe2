"""contrastive: the contrastive loss of pairs labelled similar (1) or dissimilar (0)."""

import numbers

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array, force_type

# Below this distance (representable in float16) backward treats the pair as
# coincident, where the direction diff / d is undefined.
_MIN_DIST = 1e-7


def _check_options(margin, reduce):
    if (
        not isinstance(margin, numbers.Real)
        or isinstance(margin, bool)
        or not numpy.isfinite(margin)
        or margin <= 0
    ):
        raise ValueError(f"contrastive: expected margin to be a positive number, got {margin!r}")
    if reduce not in ("mean", "no"):
        raise ValueError(f"contrastive: expected reduce to be 'mean' or 'no', got {reduce!r}")


class Contrastive(FunctionNode):
    """``(y d**2 + (1 - y) max(margin - d, 0)**2) / 2`` per pair, ``d = |x0 - x1|_2``."""

    def __init__(self, margin=1, reduce="mean"):
        _check_options(margin, reduce)
        self.margin = float(margin)
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x0", "x1", "y"))
        x0, x1, y = in_types
        type_check.expect(
            x0.dtype.kind == "f",
            x0.dtype == x1.dtype,
            y.dtype.kind == "i",
            x0.ndim == 2,
            x1.ndim == 2,
            y.ndim == 1,
            x0.shape == x1.shape,
            x1.shape[0] == y.shape[0],
            x1.shape[0] > 0,
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x0, x1, y = inputs
        xp = backend.get_array_module(x0)
        dtype = x0.dtype
        acc = numpy.float32 if dtype == numpy.float16 else dtype
        diff = x0 - x1
        diff *= diff
        dist_sq = diff.sum(axis=1, dtype=acc)
        short = xp.sqrt(dist_sq)
        xp.subtract(force_type(acc, self.margin), short, out=short)
        xp.maximum(short, 0, out=short)
        short *= short
        similar = y.astype(acc)
        loss = similar * dist_sq
        xp.subtract(1, similar, out=similar)
        similar *= short
        loss += similar
        loss *= numpy.dtype(acc).type(0.5)
        if self.reduce == "mean":
            loss = loss.sum() / len(loss)
        return (force_array(loss, dtype),)

    def backward(self, indexes, grad_outputs):
        x0, x1, y = self.get_retained_inputs()
        gy = grad_outputs[0]
        dtype = x0.dtype
        n = x0.shape[0]
        diff = x0 - x1
        dist_sq = ops.sum(diff * diff, axis=1)
        # d L / d x0 = y * diff - (1 - y) * max(margin - d, 0) * diff / d. Where
        # d < _MIN_DIST the square root sees 1 instead of d**2 (keeping its
        # derivative finite) and the shortfall counts d as 0; diff / d is
        # formed before scaling, so that it cannot overflow.
        far = x0.xp.sqrt(dist_sq.array) >= force_type(dtype, _MIN_DIST)
        near = (~far).astype(dtype)
        far = far.astype(dtype)
        dist = (dist_sq * far + near) ** 0.5
        shortfall = self.margin - dist * far
        active = (shortfall.array > 0).astype(dtype)
        similar = y.array.astype(dtype)
        scale = gy * (1.0 / n) if self.reduce == "mean" else gy
        pull = ops.reshape(scale * similar, (n, 1))
        push = ops.reshape(shortfall * scale * ((similar - 1) * active), (n, 1))
        gx0 = pull * diff + push * (diff / ops.reshape(dist, (n, 1)))
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gx0)
            elif i == 1:
                ret.append(-gx0)
            else:
                ret.append(None)
        return tuple(ret)


def contrastive(x0, x1, y, margin=1, reduce="mean"):
    """Contrastive loss of pairs of samples.

    With :math:`d_n = \\| x_{0n} - x_{1n} \\|_2`, the loss of pair :math:`n` is

    .. math::
        L_n = \\frac{1}{2} \\left( y_n d_n^2 + (1 - y_n) \\max(\\mathrm{margin} - d_n, 0)^2
        \\right).

    Args:
        x0 (Variable or array): the first samples, of shape ``(N, K)`` (N > 0),
            float16, float32 or float64.
        x1 (Variable or array): the second samples, of ``x0``'s shape and dtype.
        y (Variable or array): labels of shape ``(N,)``, signed integers: 1 for
            a similar pair, 0 for a dissimilar one. Not differentiable.
        margin (float): positive margin for dissimilar pairs.
        reduce (str): ``'mean'`` averages over the pairs (a 0-d array); ``'no'``
            returns the loss of each pair, of shape ``(N,)``.

    Returns:
        Variable: the loss, of ``x0``'s dtype.

    >>> import numpy as np
    >>> x0 = np.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], np.float32)
    >>> x1 = np.array([[-1.0, 3.0, 1.0], [3.5, 0.5, -2.0]], np.float32)
    >>> y = np.array([1, 0], np.int32)
    >>> contrastive(x0, x1, y).array
    array(0.3125, dtype=float32)
    >>> contrastive(x0, x1, y, reduce='no').array
    array([0.625, 0.   ], dtype=float32)
    """
    return Contrastive(margin, reduce).apply((x0, x1, y))[0]
