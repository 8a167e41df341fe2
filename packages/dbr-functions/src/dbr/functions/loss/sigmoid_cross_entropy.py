"""sigmoid_cross_entropy: binary cross entropy of the sigmoid of scores against 0/1 labels."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array
from dbr.functions._gpu import reads_values
from dbr.functions._labels import explaining_labels
from dbr.functions.activation.sigmoid import sigmoid

_IGNORE_LABEL = -1


def _acc_dtype(dtype):
    """The dtype of the computation: float32 for float16 inputs, else ``dtype``."""
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


def _check_labels(t):
    """Raise ValueError unless every label is 0, 1 or -1; return whether some is -1.

    Always on NumPy, where it costs two reductions over ``t``; on other
    backends only in debug mode, since reading the result back synchronizes
    the device (there ``None`` is returned: unknown).
    """
    if not reads_values(t):
        return None
    if t.size == 0:
        return False
    low = int(t.min())
    high = int(t.max())
    if low < _IGNORE_LABEL or high > 1:
        bad = (t < _IGNORE_LABEL) | (t > 1)
        first = int(backend.to_cpu(t[bad]).ravel()[0])
        raise ValueError(
            "sigmoid_cross_entropy: expected every label t to be 0, 1 or -1 (ignored), "
            f"got t == {first}"
        )
    return low == _IGNORE_LABEL


def _sigmoid(x, dtype):
    """``1 / (1 + exp(-x))`` in ``dtype``, as ``tanh(x / 2) / 2 + 1/2`` (no overflow)."""
    xp = backend.get_array_module(x)
    half = dtype.type(0.5)
    y = force_array(xp.multiply(x, half, dtype=dtype))
    xp.tanh(y, out=y)
    y *= half
    y += half
    return y


class SigmoidCrossEntropy(FunctionNode):
    """``-(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))``, 0 where ``t == -1``."""

    def __init__(self, normalize=True, reduce="mean"):
        if reduce not in ("mean", "no"):
            raise ValueError(
                f"sigmoid_cross_entropy: expected reduce to be 'mean' or 'no', got {reduce!r}"
            )
        self.normalize = normalize
        self.reduce = reduce
        # Set by forward for backward: where labels are not ignored (None: everywhere)
        # and 1 / the normalizer (a float, or a 0-d device array).
        self._valid = None
        self._inv_count = 1.0

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t"))
        x, t = in_types
        type_check.expect(x.dtype.kind == "f")
        with explaining_labels(t, "integer labels (int32: 0, 1, or -1 to ignore) of x's shape"):
            type_check.expect(t.dtype.kind == "i", x.shape == t.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, t = inputs
        xp = backend.get_array_module(x)
        dtype = _acc_dtype(x.dtype)
        has_ignored = _check_labels(t)
        valid = None
        if has_ignored is not False:
            valid = t != _IGNORE_LABEL
            # Label 0 where ignored keeps the loss there nonnegative, so that it becomes +0.
            t = t * valid
        # log(1 + exp(x)) - x * t, as log1p(exp(-|x|)) + max(x, 0) - x * t.
        loss = force_array(xp.abs(x, dtype=dtype))
        xp.negative(loss, out=loss)
        xp.exp(loss, out=loss)
        xp.log1p(loss, out=loss)
        loss += xp.maximum(x, 0, dtype=dtype)
        loss -= xp.multiply(x, t, dtype=dtype)
        if valid is not None:
            loss *= valid
        self._valid = valid
        if self.reduce == "no":
            return (force_array(loss, x.dtype),)
        if not self.normalize:
            self._inv_count = 1.0 / max(x.shape[0] if x.ndim else 1, 1)
        elif valid is None:
            self._inv_count = 1.0 / max(t.size, 1)
        elif xp is numpy:
            self._inv_count = 1.0 / max(int(valid.sum()), 1)
        else:
            self._inv_count = 1 / xp.maximum(valid.sum(dtype=dtype), 1)
        return (force_array(loss.sum() * self._inv_count, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        grad = SigmoidCrossEntropyGrad(self.reduce, self._valid, self._inv_count)
        return grad.apply((x, t, grad_outputs[0]))[0], None


class SigmoidCrossEntropyGrad(FunctionNode):
    """``c * (sigmoid(x) - t)``, 0 where ``t == -1``: the gradient by ``x``.

    ``c`` is the output gradient, divided by the normalizer for ``'mean'``.
    """

    def __init__(self, reduce, valid, inv_count):
        self.reduce = reduce
        self.valid = valid
        self.inv_count = inv_count

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, t, gy = inputs
        dtype = _acc_dtype(x.dtype)
        gx = _sigmoid(x, dtype)
        gx -= t
        if self.valid is not None:
            gx *= self.valid
        if self.reduce == "mean":
            inv = self.inv_count
            gy = gy * (dtype.type(inv) if isinstance(inv, float) else inv.astype(dtype))
        gx *= gy
        return (force_array(gx, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, t, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        if self.valid is not None:
            ggx = ggx * self.valid.astype(x.dtype)
        y = sigmoid(x)
        ret = []
        for i in indexes:
            if i == 0:
                c = gy * self.inv_count if self.reduce == "mean" else gy
                ret.append(ggx * c * (y - y * y))
            elif i == 2:
                g = ggx * (y - t.array.astype(x.dtype))
                ret.append(ops.sum(g) * self.inv_count if self.reduce == "mean" else g)
            else:
                ret.append(None)
        return tuple(ret)


def sigmoid_cross_entropy(x, t, normalize=True, reduce="mean"):
    """Binary cross entropy of ``sigmoid(x)`` against labels ``t``.

    Elementwise, the loss is
    ``-(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))``, computed stably as
    ``log(1 + exp(-|x|)) + max(x, 0) - x t``; it is 0 where ``t == -1``.

    Args:
        x (Variable or array): scores (logits) of any shape, float16, float32
            or float64 (float16 is computed in float32).
        t (Variable or array): labels of ``x``'s shape, signed integers: 0,
            1, or -1 to ignore the element. Not differentiable. Other values
            raise ValueError (always on NumPy; on a GPU only in debug mode,
            where checking needs a device synchronization).
        normalize (bool): for ``reduce='mean'``, divide the sum by the number
            of labels that are not -1 if True, by the batch size
            ``x.shape[0]`` if False (at least 1 either way).
        reduce (str): ``'mean'`` returns a 0-d array; ``'no'`` the loss of
            each element, of ``x``'s shape.

    Returns:
        Variable: the loss, of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], np.float32)
    >>> t = np.array([[0, 1, 0], [1, 1, -1]], np.int32)
    >>> round(float(sigmoid_cross_entropy(x, t).array), 6)
    0.256647
    >>> round(float(sigmoid_cross_entropy(x, t, normalize=False).array), 6)
    0.641618
    >>> sigmoid_cross_entropy(x, t, reduce='no').array.round(6)
    array([[0.126928, 0.048587, 0.974077],
           [0.006715, 0.126928, 0.      ]], dtype=float32)
    """
    return SigmoidCrossEntropy(normalize, reduce).apply((x, t))[0]
