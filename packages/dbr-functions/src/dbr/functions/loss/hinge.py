"""hinge: the one-vs-all hinge loss of class scores against integer labels."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array
from dbr.functions._gpu import reads_values
from dbr.functions._labels import explaining_labels


def _check_labels(x, t):
    """Raise ValueError unless every label is in ``[0, x.shape[1])``.

    Always on NumPy, where it is cheap; on other backends only in debug mode,
    since reading the result back synchronizes the device.
    """
    if not reads_values(t):
        return
    n_class = x.shape[1]
    bad = (t < 0) | (t >= n_class)
    if bool(bad.any()):
        first = int(backend.to_cpu(t[bad])[0])
        raise ValueError(
            f"hinge: expected every label t to satisfy 0 <= t < x.shape[1] == {n_class}, "
            f"got t == {first}"
        )


def _signed_margin(x, t):
    """``1 + s * x`` with ``s = -1`` at each row's label and ``+1`` elsewhere."""
    xp = backend.get_array_module(x)
    rows = xp.arange(len(t))
    b = x.copy()
    b[rows, t] *= -1
    b += 1
    return b, rows


class _UnknownNorm(ValueError, NotImplementedError):
    """An unknown ``norm``: a ValueError, and the NotImplementedError Chainer raises."""


class Hinge(FunctionNode):
    """Hinge loss ``max(0, 1 + s * x) ** p`` (``p`` = 1 or 2), averaged over the batch or not."""

    def __init__(self, norm="L1", reduce="mean"):
        if norm not in ("L1", "L2"):
            raise _UnknownNorm(f"hinge: expected norm to be 'L1' or 'L2', got {norm!r}")
        if reduce not in ("mean", "no"):
            raise ValueError(f"hinge: expected reduce to be 'mean' or 'no', got {reduce!r}")
        self.norm = norm
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t"))
        x, t = in_types
        type_check.expect(x.dtype.kind == "f", x.ndim == 2)
        with explaining_labels(t, "integer class indices (int32) of shape (x.shape[0],)"):
            type_check.expect(t.dtype.kind == "i", t.ndim == 1, x.shape[0] == t.shape[0])

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, t = inputs
        _check_labels(x, t)
        xp = backend.get_array_module(x)
        loss, _ = _signed_margin(x, t)
        xp.maximum(loss, 0, out=loss)
        if self.norm == "L2":
            loss *= loss
        if self.reduce == "mean":
            acc = numpy.float32 if x.dtype == numpy.float16 else x.dtype
            loss = force_array(loss.sum(dtype=acc) / max(len(x), 1), x.dtype)
        return (loss,)

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        return HingeGrad(self.norm, self.reduce).apply((x, t, grad_outputs[0]))[:1] + (None,)


class HingeGrad(FunctionNode):
    """The hinge loss gradient by ``x``: ``coeff * s * p * max(0, 1 + s * x) ** (p - 1)``."""

    def __init__(self, norm, reduce):
        self.norm = norm
        self.reduce = reduce

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, t, gy = inputs
        xp = backend.get_array_module(x)
        b, rows = _signed_margin(x, t)
        if self.norm == "L1":
            gx = (b > 0).astype(x.dtype)
        else:
            gx = xp.maximum(b, 0, out=b)
            gx *= 2
        gx[rows, t] *= -1
        if self.reduce == "mean":
            gx *= gy * x.dtype.type(1.0 / max(len(x), 1))
        else:
            gx *= gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x, t, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        xa = x.array
        b, rows = _signed_margin(xa, t.array)
        active = (b > 0).astype(xa.dtype)
        sign = x.xp.ones_like(xa)
        sign[rows, t.array] = -1
        scale = 1.0 / max(len(xa), 1) if self.reduce == "mean" else 1.0
        ret = []
        for i in indexes:
            if i == 0:
                if self.norm == "L1":
                    ret.append(None)
                else:
                    ret.append(ggx * (gy * (2.0 * scale)) * active)
            elif i == 2:
                if self.norm == "L1":
                    slope = sign * active
                else:
                    slope = (x * sign + 1.0) * (active * sign * 2)
                g = ggx * slope
                ret.append(ops.sum(g) * scale if self.reduce == "mean" else g)
            else:
                ret.append(None)
        return tuple(ret)


def hinge(x, t, norm="L1", reduce="mean"):
    """Hinge loss for one-of-many classification.

    .. math::
        L = \\frac{1}{N} \\sum_{n=1}^N \\sum_{k=1}^K
        \\left[\\max(0, 1 - \\delta\\{t_n = k\\} x_{nk})\\right]^p,

    where :math:`\\delta\\{c\\}` is 1 if :math:`c` holds and -1 otherwise, and
    :math:`p` is 1 for ``'L1'`` and 2 for ``'L2'``.

    Args:
        x (Variable or array): scores of shape ``(N, K)``, float16, float32 or float64.
        t (Variable or array): labels of shape ``(N,)``, signed integers in ``[0, K)``.
            Out-of-range labels raise ValueError (always on NumPy; on a GPU
            only in debug mode, to avoid a device synchronization).
        norm (str): ``'L1'`` or ``'L2'``.
        reduce (str): ``'mean'`` returns the sum divided by ``N`` (a 0-d
            array); ``'no'`` returns the elementwise loss of shape ``(N, K)``.

    Returns:
        Variable: the loss, of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], np.float32)
    >>> t = np.array([1, 0], np.int32)
    >>> hinge(x, t).array
    array(2.5, dtype=float32)
    >>> hinge(x, t, norm='L2').array
    array(5.75, dtype=float32)
    >>> hinge(x, t, reduce='no').array
    array([[0. , 0. , 1.5],
           [0. , 3. , 0.5]], dtype=float32)
    """
    return Hinge(norm, reduce).apply((x, t))[0]
