"""triplet: the triplet ranking loss of (anchor, positive, negative) samples."""

import numbers

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array, force_type


def _margin_distance(anchor, positive, negative, margin):
    """``|a - p|**2 - |a - n|**2 + margin`` per row (in float32 for float16 inputs)."""
    acc = numpy.float32 if anchor.dtype == numpy.float16 else anchor.dtype
    # |a - p|**2 - |a - n|**2 == sum((n - p) * (2a - p - n)): one product instead of two.
    w = anchor + anchor
    w -= positive
    w -= negative
    w *= negative - positive
    dist = w.sum(axis=1, dtype=acc)
    dist += force_type(acc, margin)
    return dist


class Triplet(FunctionNode):
    """``max(|a - p|**2 - |a - n|**2 + margin, 0)`` per sample, averaged or not."""

    def __init__(self, margin=0.2, reduce="mean"):
        if (
            not isinstance(margin, numbers.Real)
            or isinstance(margin, bool)
            or not numpy.isfinite(margin)
            or margin <= 0
        ):
            raise ValueError(f"triplet: expected margin to be a positive number, got {margin!r}")
        if reduce not in ("mean", "no"):
            raise ValueError(f"triplet: expected reduce to be 'mean' or 'no', got {reduce!r}")
        self.margin = float(margin)
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("anchor", "positive", "negative"))
        a, p, n = in_types
        type_check.expect(
            a.dtype.kind == "f",
            a.dtype == p.dtype,
            a.dtype == n.dtype,
            a.ndim == 2,
            a.shape == p.shape,
            a.shape == n.shape,
            a.shape[0] > 0,
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        anchor, positive, negative = inputs
        dtype = anchor.dtype
        dist = _margin_distance(anchor, positive, negative, self.margin)
        backend.get_array_module(dist).maximum(dist, 0, out=dist)
        if self.reduce == "mean":
            dist = dist.sum() / len(dist)
        return (force_array(dist, dtype),)

    def backward(self, indexes, grad_outputs):
        anchor, positive, negative = self.get_retained_inputs()
        gy = grad_outputs[0]
        a, p, n = anchor.array, positive.array, negative.array
        active = (_margin_distance(a, p, n, self.margin) > 0).astype(a.dtype)
        if self.reduce == "mean":
            coeff = (gy * (2.0 / len(a))) * active
        else:
            coeff = gy * (active * 2)
        coeff = ops.reshape(coeff, (len(a), 1))
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(coeff * (negative - positive))
            elif i == 1:
                ret.append(coeff * (positive - anchor))
            else:
                ret.append(coeff * (anchor - negative))
        return tuple(ret)


def triplet(anchor, positive, negative, margin=0.2, reduce="mean"):
    """Triplet loss.

    .. math::
        L = \\frac{1}{N} \\sum_{i=1}^N \\max\\{ d(a_i, p_i) - d(a_i, n_i)
        + \\mathrm{margin}, 0 \\}, \\quad d(x, y) = \\| x - y \\|_2^2.

    Args:
        anchor (Variable or array): anchors of shape ``(N, K)`` (N > 0),
            float16, float32 or float64.
        positive (Variable or array): positive examples, of ``anchor``'s
            shape and dtype.
        negative (Variable or array): negative examples, of ``anchor``'s
            shape and dtype.
        margin (float): a positive margin.
        reduce (str): ``'mean'`` averages over the samples (a 0-d array);
            ``'no'`` returns the loss of each sample, of shape ``(N,)``.

    Returns:
        Variable: the loss, of ``anchor``'s dtype.

    >>> import numpy as np
    >>> a = np.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], np.float32)
    >>> p = np.array([[-2.1, 2.8, 0.5], [4.9, 2.0, -0.4]], np.float32)
    >>> n = np.array([[-2.1, 2.7, 0.7], [4.9, 2.0, -0.7]], np.float32)
    >>> round(float(triplet(a, p, n).array), 5)
    0.14
    >>> triplet(a, p, n, reduce='no').shape
    (2,)
    """
    return Triplet(margin, reduce).apply((anchor, positive, negative))[0]
