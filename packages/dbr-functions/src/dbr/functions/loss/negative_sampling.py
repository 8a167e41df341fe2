"""negative_sampling: the word2vec loss of a positive example against sampled negatives."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.ops.get_item import GetItemGrad
from dbr.core.utils import force_array
from dbr.functions.activation.sigmoid import sigmoid

_IGNORE_LABEL = -1
_REDUCES = ("sum", "no")


def _compute_dtype(dtype):
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


class NegativeSamplingFunction(FunctionNode):
    """Sum over the samples of ``softplus(-x.w_t)`` and ``softplus(x.w_s)``.

    Rows whose label is -1 are ignored (loss 0, no gradient).
    """

    samples = None

    def __init__(self, sampler, sample_size, reduce="sum"):
        if reduce not in _REDUCES:
            raise ValueError(
                f"negative_sampling: expected reduce to be one of {_REDUCES}, got {reduce!r}"
            )
        if not callable(sampler):
            raise TypeError(
                f"negative_sampling: expected sampler to be callable, got {type(sampler).__name__}"
            )
        if not isinstance(sample_size, (int, numpy.integer)) or isinstance(sample_size, bool):
            raise TypeError(
                f"negative_sampling: expected sample_size to be an int, got {sample_size!r}"
            )
        if sample_size < 0:
            raise ValueError(f"negative_sampling: expected sample_size >= 0, got {sample_size}")
        self.sampler = sampler
        self.sample_size = int(sample_size)
        self.reduce = reduce

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t", "W"))
        x_type, t_type, w_type = in_types
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 2,
            t_type.dtype.kind == "i",
            t_type.ndim == 1,
            x_type.shape[0] == t_type.shape[0],
            w_type.dtype == x_type.dtype,
            w_type.ndim == 2,
            w_type.shape[1] == x_type.shape[1],
        )

    def _make_samples(self, t, xp):
        shape = (t.shape[0], self.sample_size + 1)
        samples = self.sampler(shape)
        kind = getattr(getattr(samples, "dtype", None), "kind", None)
        if kind not in ("i", "u") or samples.shape != shape:
            raise ValueError(
                f"negative_sampling: expected sampler{shape} to return an integer array of "
                f"shape {shape}, got {type(samples).__name__} of shape "
                f"{getattr(samples, 'shape', None)} and dtype {getattr(samples, 'dtype', None)}"
            )
        # A copy: the first column is overwritten with the labels.
        samples = xp.array(samples, copy=True)
        samples[:, 0] = t
        return samples

    def forward(self, inputs):
        self.retain_inputs((0, 2))
        x, t, W = inputs
        xp = backend.get_array_module(x)
        samples = self._make_samples(t, xp)
        dtype = _compute_dtype(x.dtype)
        w = W[samples].astype(dtype, copy=False)
        # a[b, k] = -x_b.w_t for the positive k = 0 and x_b.w_s for the negatives.
        a = xp.matmul(w, x.astype(dtype, copy=False)[:, :, None])[:, :, 0]
        a[:, 0] *= -1
        loss = xp.logaddexp(a, dtype.type(0)).sum(axis=1)
        valid = t != _IGNORE_LABEL
        loss *= valid
        if self.reduce == "sum":
            loss = loss.sum()
        self.samples = samples
        self._valid = valid
        self._a = a
        return (force_array(loss, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        grad = NegativeSamplingGrad(
            self.samples, self._valid, self._a, self.reduce, 0 in indexes, 2 in indexes
        )
        grads = iter(grad.apply((x, W, grad_outputs[0])))
        return tuple([next(grads) if i in (0, 2) else None for i in indexes])


class NegativeSamplingGrad(FunctionNode):
    """The gradients of negative sampling by ``x`` and/or ``W`` (whichever are asked for)."""

    def __init__(self, samples, valid, a, reduce, need_x, need_w):
        self.samples = samples
        self.valid = valid
        self.a = a
        self.reduce = reduce
        self.need_x = need_x
        self.need_w = need_w

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, W, gy = inputs
        xp = backend.get_array_module(x)
        a = self.a
        dtype = a.dtype
        half = dtype.type(0.5)
        # g[b, k]: the derivative of the loss by x_b.w_k, i.e. -sigmoid(a) for the
        # positive and sigmoid(a) for the negatives, times gy.
        g = xp.multiply(a, half)
        xp.tanh(g, out=g)
        g *= half
        g += half
        g[:, 0] *= -1
        gy = gy.astype(dtype, copy=False)
        g *= gy if self.reduce == "sum" else gy[:, None]
        g *= self.valid[:, None]
        outputs = []
        if self.need_x:
            w = W[self.samples].astype(dtype, copy=False)
            outputs.append(force_array(xp.matmul(g[:, None, :], w)[:, 0, :], x.dtype))
        if self.need_w:
            gW = xp.zeros(W.shape, dtype)
            rows = g[:, :, None] * x.astype(dtype, copy=False)[:, None, :]
            xp.add.at(gW, self.samples, rows)
            outputs.append(force_array(gW, W.dtype))
        return tuple(outputs)

    def backward(self, indexes, grad_outputs):
        x, W, gy = self.get_retained_inputs()
        names = ["x"] * self.need_x + ["W"] * self.need_w
        gg = dict(zip(names, grad_outputs))
        ggx, ggW = gg.get("x"), gg.get("W")
        if ggx is None and ggW is None:
            return (None,) * len(indexes)
        xp = x.xp
        samples = self.samples
        n, k = samples.shape
        d = x.shape[1]
        sign = xp.ones(k, x.dtype)
        sign[0] = -1
        valid = self.valid.astype(x.dtype)[:, None]
        w = ops.get_item(W, samples)
        x3 = ops.reshape(x, (n, 1, d))
        sig = sigmoid(ops.sum(w * x3, axis=2) * sign)
        # Phi = sum(ggx * gx) + sum(ggW * gW) = sum_bk g[b, k] * c[b, k], with
        # g = gy * sign * sigmoid(a) and c = ggx_b.w_k + ggW_k.x_b.
        terms = []
        if ggx is not None:
            ggx3 = ops.reshape(ggx, (n, 1, d))
            terms.append(ops.sum(w * ggx3, axis=2))
        if ggW is not None:
            ggw = ops.get_item(ggW, samples)
            terms.append(ops.sum(ggw * x3, axis=2))
        c = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        coef = gy * valid if self.reduce == "sum" else ops.reshape(gy, (n, 1)) * valid
        g = coef * sig * sign
        r = c * coef * sig * (1 - sig)
        r3 = ops.reshape(r, (n, k, 1))
        g3 = ops.reshape(g, (n, k, 1))
        ret = []
        for i in indexes:
            if i == 0:
                gx = ops.sum(r3 * w, axis=1)
                if ggW is not None:
                    gx = gx + ops.sum(g3 * ggw, axis=1)
                ret.append(gx)
            elif i == 1:
                gw = r3 * x3
                if ggx is not None:
                    gw = gw + g3 * ggx3
                ret.append(GetItemGrad((samples,), W.shape, W.dtype).apply((gw,))[0])
            else:
                ggy = ops.sum(c * sig * sign * valid, axis=1)
                ret.append(ops.sum(ggy) if self.reduce == "sum" else ggy)
        return tuple(ret)


def negative_sampling(x, t, W, sampler, sample_size, reduce="sum", *, return_samples=False):
    """Negative sampling loss (word2vec).

    For an input :math:`x` with true label :math:`p` and ``sample_size``
    negatives :math:`N` drawn by ``sampler``, the loss is

    .. math::
        f(x, p) = -\\log \\sigma(x^\\top w_p) - \\sum_{n \\in N} \\log \\sigma(-x^\\top w_n),

    where :math:`\\sigma` is the sigmoid and :math:`w_i` the row ``i`` of
    ``W``. Rows of the batch whose label is -1 are ignored (their loss is 0).

    Args:
        x (Variable or array): inputs of shape ``(B, D)`` (float16, float32 or
            float64).
        t (Variable or array): labels of shape ``(B,)``, a signed integer dtype
            (int32 as in Chainer), each in ``[0, V)`` or -1.
        W (Variable or array): the weight matrix of shape ``(V, D)``, of ``x``'s
            dtype.
        sampler (callable): takes a shape and returns an integer array of that
            shape whose elements are samples from the word distribution (for
            example the ``sample`` method of a Walker alias table).
        sample_size (int): the number of negative samples per row.
        reduce (str): ``'sum'`` returns the summed loss, ``'no'`` one per row.
        return_samples (bool): also return the samples: an integer array of
            shape ``(B, sample_size + 1)`` whose first column holds ``t`` and the
            others the negatives.

    Returns:
        Variable or tuple: the loss, a 0-d array (``'sum'``) or of shape
        ``(B,)`` (``'no'``), of ``x``'s dtype; with ``return_samples``, the pair
        ``(loss, samples)``. It is differentiable twice by ``x`` and ``W``.

    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0]], np.float32)
    >>> W = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]], np.float32)
    >>> sampler = lambda shape: np.full(shape, 2, np.int32)
    >>> loss, samples = negative_sampling(
    ...     x, np.array([1], np.int32), W, sampler, 2, return_samples=True)
    >>> samples
    array([[1, 2, 2]], dtype=int32)
    >>> round(float(loss.array), 4)  # softplus(-1) + 2 * softplus(2)
    4.5671
    """
    func = NegativeSamplingFunction(sampler, sample_size, reduce)
    loss = func.apply((x, t, W))[0]
    if return_samples:
        return loss, func.samples
    return loss
