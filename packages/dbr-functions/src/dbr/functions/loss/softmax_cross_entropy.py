"""softmax_cross_entropy: cross entropy of the softmax of scores against labels or soft targets.

Axis 1 of ``x`` holds the classes. Integer ``t`` holds one label per sample
(and per position, for inputs of more than two axes); floating ``t`` of
``x``'s shape holds target distributions ("soft targets").

The default path (``enable_double_backprop=False``) is one FunctionNode:
its forward computes the exponentials of ``x`` (shifted by the maxima where
that is needed to avoid overflow or underflow) once and keeps them with
their sums (``cache_score``); its backward scales them into ``softmax -
onehot`` in place. The other path composes log_softmax and indexing.
"""

import numbers

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.configuration import config
from dbr.core.utils import force_array
from dbr.core.variable import Variable, as_variable
from dbr.functions._cpu import blockwise
from dbr.functions._gpu import kernel, reads_values
from dbr.functions._labels import explaining_labels
from dbr.functions.activation.log_softmax import log_softmax
from dbr.functions.activation.softmax import softmax

_REDUCE = ("mean", "no")
_SOFT_TARGET_LOSS = ("cross-entropy", "kl-divergence")
# Added to soft targets inside the logarithm of the KL divergence, as Chainer does.
_KL_EPS = 1e-7

# The GPU path for labels. x is (N, C, R) in C order, the positions (N, R) are t's
# elements; A is the computation dtype (float32 for float16).
_SCE_EXP_ELEMENTWISE = {
    "in_params": "T x, T m",
    "out_params": "A e",
    "operation": "e = exp((A)x - (A)m)",
    "name": "dbr_softmax_cross_entropy_exp",
}
# Per position: the label (ignored ones made 0), its weight (0 where ignored) and
# the weighted -log softmax(x) at it, from the sums s and maxima m of the exponentials.
_SCE_NLL_ELEMENTWISE = {
    "in_params": (
        "S t, raw T x, raw A s, raw T m, raw A class_weight, "
        "int32 n_class, int32 rest, int32 ignore_label, bool weighted"
    ),
    "out_params": "A nll, A w, S label",
    "operation": (
        "const bool valid = t != ignore_label;"
        "const S k = valid ? t : (S)0;"
        "label = k;"
        "w = valid ? (weighted ? class_weight[k] : (A)1) : (A)0;"
        "const ptrdiff_t n = i / rest;"
        "const A x_t = (A)x[(n * n_class + k) * rest + (i - n * rest)];"
        "nll = w * (log(s[i]) - (x_t - (A)m[i]))"
    ),
    "name": "dbr_softmax_cross_entropy_nll",
}
# 1 / max(the number of labels that are not ignore_label, 1).
_SCE_INV_COUNT_REDUCTION = {
    "in_params": "S t, int32 ignore_label",
    "out_params": "float64 inv_count",
    "map_expr": "t != ignore_label ? 1.0 : 0.0",
    "reduce_expr": "a + b",
    "post_map_expr": "inv_count = 1.0 / (a > 1.0 ? a : 1.0)",
    "identity": "0.0",
    "name": "dbr_softmax_cross_entropy_inv_count",
    "reduce_type": "double",
}
# c * w * (softmax(x) - onehot(label)) with c the output gradient (0-d for 'mean').
_SCE_GRAD_ELEMENTWISE = {
    "in_params": (
        "A e, raw A s, raw S label, raw A w, raw A c, int32 n_class, int32 rest, bool c_scalar"
    ),
    "out_params": "T gx",
    "operation": (
        "const ptrdiff_t row = i / rest;"
        "const ptrdiff_t pos = (row / n_class) * rest + (i - row * rest);"
        "const A coef = c[c_scalar ? 0 : pos] * w[pos];"
        "const A hit = (S)(row % n_class) == label[pos] ? (A)1 : (A)0;"
        "gx = (T)(coef * (e / s[pos] - hit))"
    ),
    "name": "dbr_softmax_cross_entropy_grad",
}


class _ClassWeightTypeError(TypeError, ValueError):
    """A class_weight that is a Variable: a TypeError, and Chainer's ValueError."""


def _check_options(normalize, class_weight, ignore_label, reduce, soft_target_loss):
    if reduce not in _REDUCE:
        raise ValueError(
            f"softmax_cross_entropy: expected reduce to be 'mean' or 'no', got {reduce!r}"
        )
    if soft_target_loss not in _SOFT_TARGET_LOSS:
        raise ValueError(
            "softmax_cross_entropy: expected soft_target_loss to be 'cross-entropy' or "
            f"'kl-divergence', got {soft_target_loss!r}"
        )
    if isinstance(ignore_label, bool) or not isinstance(ignore_label, numbers.Integral):
        raise TypeError(
            f"softmax_cross_entropy: expected ignore_label to be an int, got {ignore_label!r}"
        )
    if class_weight is not None:
        if isinstance(class_weight, Variable):
            raise _ClassWeightTypeError(
                "softmax_cross_entropy: expected class_weight to be a numpy.ndarray or "
                "cupy.ndarray, got a Variable (weights are constants: pass its .array)"
            )
        if not isinstance(class_weight, backend.get_array_types()):
            raise TypeError(
                "softmax_cross_entropy: expected class_weight to be a numpy.ndarray or "
                f"cupy.ndarray, got {type(class_weight).__name__}"
            )
        if class_weight.ndim != 1 or class_weight.dtype.kind != "f":
            raise ValueError(
                "softmax_cross_entropy: expected class_weight to be a 1-d floating array, "
                f"got ndim {class_weight.ndim} and dtype {class_weight.dtype}"
            )


def _acc_dtype(dtype):
    """The dtype of the computation: float32 for float16 inputs, else ``dtype``."""
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


def _class_weight_for(class_weight, x, dtype):
    """``class_weight`` on ``x``'s device and in ``dtype``, checked against ``x.shape[1]``."""
    if class_weight.shape[0] != x.shape[1]:
        raise ValueError(
            "softmax_cross_entropy: expected class_weight of shape (x.shape[1],) == "
            f"({x.shape[1]},), got {class_weight.shape}"
        )
    if type(class_weight) is not type(x):
        class_weight = backend.to_device(backend.get_device_from_array(x), class_weight)
    return class_weight.astype(dtype, copy=False)


def _check_labels(t, n_class, ignore_label):
    """Raise ValueError unless each label is in ``[0, n_class)`` or equals ``ignore_label``.

    Return whether some label equals ``ignore_label``. The check runs always
    on NumPy, where it costs two reductions over ``t``; on other backends
    only in debug mode, since reading the result back synchronizes the
    device (there ``None`` is returned: unknown).
    """
    if not reads_values(t):
        return None
    if t.size == 0:
        return False
    low = int(t.min())
    high = int(t.max())
    if low >= 0 and high < n_class:
        return low <= ignore_label <= high and bool((t == ignore_label).any())
    bad = ((t < 0) | (t >= n_class)) & (t != ignore_label)
    if bool(bad.any()):
        first = int(backend.to_cpu(t[bad]).ravel()[0])
        raise ValueError(
            "softmax_cross_entropy: expected every label t to satisfy "
            f"0 <= t < x.shape[1] == {n_class} or t == ignore_label == {ignore_label}, "
            f"got t == {first}"
        )
    return True


def _label_index(xp, t):
    """The index of an array of shape ``(N, C, ...)`` at the labels ``t`` (``(N, ...)``) on axis 1.

    Indexing with it gives an array of ``t``'s shape.
    """
    ndim = t.ndim
    if ndim == 1:
        return xp.arange(t.shape[0]), t
    grids = [
        xp.arange(n).reshape((1,) * i + (n,) + (1,) * (ndim - i - 1))
        for i, n in enumerate(t.shape)
    ]
    return (grids[0], t, *grids[1:])


def _onehot(t, n_class, dtype):
    """``onehot(t)`` with the classes along axis 1: shape ``(N, C, ...)``."""
    xp = backend.get_array_module(t)
    target = xp.zeros((t.shape[0], n_class) + t.shape[1:], dtype)
    target[_label_index(xp, t)] = 1
    return target


def _expand_class_axis(a):
    """``a`` of shape ``(N, ...)`` (or 0-d) made to broadcast against ``(N, C, ...)``."""
    if a.ndim == 0:
        return a
    return a.reshape(a.shape[:1] + (1,) + a.shape[1:])


# Sums of unshifted exponentials within these bounds are used as they are:
# summing and dividing by them loses nothing to overflow or underflow.
_MIN_UNSHIFTED_SUM = 1e-30
_MAX_UNSHIFTED_SUM = 1e30


def _exponentials(x, dtype, shift=False):
    """``(e, s, m)``: exponentials of ``x`` in ``dtype`` and their sums along axis 1.

    On NumPy, unless ``shift`` is set, ``e`` is ``exp(x)`` itself and ``m`` is
    None when every sum ``s`` lies within [1e-30, 1e30]; this saves the pass
    that finds the maxima. Otherwise ``m`` is the maximum of ``x`` along
    axis 1 and ``e = exp(x - m)``. ``s`` and ``m`` keep axis 1 (length 1).
    """
    xp = backend.get_array_module(x)
    if xp is numpy and not shift and x.size:
        with numpy.errstate(over="ignore"):
            e = blockwise(_exp_block, numpy.empty(x.shape, dtype), x, cache_blocks=False)
        s = _sum_rows(e)
        if s.min() >= _MIN_UNSHIFTED_SUM and s.max() <= _MAX_UNSHIFTED_SUM:
            return e, s, None
    m = x.max(axis=1, keepdims=True)
    e = x.astype(dtype)
    e -= m
    xp.exp(e, out=e)
    return e, _sum_rows(e), m


def _exp_block(e, x):
    numpy.exp(x, out=e, dtype=e.dtype)


def _scale_block(gx, scale):
    gx *= scale


def _sum_rows(e):
    """The sum of ``e`` along axis 1 (keepdims)."""
    if type(e) is numpy.ndarray and e.ndim == 2:
        # A matrix-vector product sums the rows several times faster than sum(axis=1).
        return (e @ numpy.ones(e.shape[1], e.dtype)).reshape(-1, 1)
    return e.sum(axis=1, keepdims=True)


def _nll_at(x, t, s, m, dtype):
    """``-log softmax(x)`` at the labels ``t``, from the output of :func:`_exponentials`.

    ``log(s) - (x[t] - m)``. With unshifted sums, ``log(s)`` is close to the
    maximum of ``x``, so it is taken in float64: a loss near 0 (a confident,
    correct prediction) keeps its precision.
    """
    xp = backend.get_array_module(x)
    x_t = x[_label_index(xp, t)].astype(dtype, copy=False)
    s = s[:, 0]
    if m is None:
        return xp.log(s.astype(numpy.float64)) - x_t
    nll = xp.log(s)
    nll -= x_t - m[:, 0]
    return nll


class SoftmaxCrossEntropy(FunctionNode):
    """Softmax along axis 1 followed by the cross entropy with labels or soft targets."""

    def __init__(
        self,
        normalize=True,
        cache_score=True,
        class_weight=None,
        ignore_label=-1,
        reduce="mean",
        soft_target_loss="cross-entropy",
    ):
        _check_options(normalize, class_weight, ignore_label, reduce, soft_target_loss)
        self.normalize = normalize
        self.cache_score = cache_score
        self.class_weight = class_weight
        self.ignore_label = int(ignore_label)
        self.reduce = reduce
        self.soft_target_loss = soft_target_loss
        # Set by forward for backward: the exponentials and their sums; the
        # labels with ignored ones replaced by 0 and the weight of each label
        # (None where no label is ignored and no class is weighted); and
        # 1 / the normalizer (a float, or a 0-d device array where counting
        # would synchronize).
        self._exp = None
        self._exp_sum = None
        self._labels = None
        self._weight = None
        self._inv_count = 1.0

    @property
    def y(self):
        """The softmax of ``x``, in ``x``'s dtype, while forward's cache (``cache_score``) is held.

        Chainer's attribute: None when the scores are not cached, and once
        backward has used them. It is computed on access from the cached
        exponentials, so forward keeps only what backward needs.
        """
        if self._exp is None:
            return None
        x = self.get_retained_inputs()[0]
        return (self._exp / self._exp_sum).astype(x.dtype, copy=False)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t"))
        x, t = in_types
        type_check.expect(x.dtype.kind == "f", x.ndim >= 2)
        expected = (
            "integer class indices (int32) of shape x.shape[:1] + x.shape[2:], or soft "
            "labels (class probabilities) of x's dtype kind and shape"
        )
        with explaining_labels(t, expected):
            if type_check.eval(t.dtype).kind == "f":
                type_check.expect(x.shape == t.shape)
            else:
                type_check.expect(
                    t.dtype.kind == "i",
                    t.ndim == x.ndim - 1,
                    x.shape[0] == t.shape[0],
                    x.shape[2:] == t.shape[1:],
                    x.shape[1] > 0,
                )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, t = inputs
        if t.dtype.kind == "f":
            return self._forward_soft(x, t)
        xp = backend.get_array_module(x)
        dtype = _acc_dtype(x.dtype)
        has_ignored = _check_labels(t, x.shape[1], self.ignore_label)
        if xp is not numpy:
            return self._forward_gpu(x, t, dtype)
        e, s, m = _exponentials(x, dtype)

        weight = valid = None
        if has_ignored is not False:
            valid = t != self.ignore_label
            t = t * valid
            weight = valid.astype(dtype)
            self._labels = t
        if self.class_weight is not None:
            w = _class_weight_for(self.class_weight, x, dtype)[t]
            weight = w if weight is None else w * weight
        nll = _nll_at(x, t, s, m, dtype)
        if weight is not None:
            nll *= weight
        self._weight = weight

        if self.reduce == "mean":
            if not self.normalize:
                self._inv_count = 1.0 / max(x.shape[0], 1)
            elif valid is None:
                self._inv_count = 1.0 / max(t.size, 1)
            elif xp is numpy:
                self._inv_count = 1.0 / max(int(valid.sum()), 1)
            else:
                self._inv_count = 1 / xp.maximum(valid.sum(dtype=dtype), 1)
            loss = force_array(nll.sum() * self._inv_count, x.dtype)
        else:
            loss = force_array(nll, x.dtype)
        if self.cache_score:
            self._exp = e
            self._exp_sum = s
        return (loss,)

    def _forward_gpu(self, x, t, dtype):
        # Kernels: max, exp, sum, the per-position loss, then its sum and scaling.
        xp = backend.get_array_module(x)
        n_class = x.shape[1]
        rest = t.size // max(t.shape[0], 1)
        m = x.max(axis=1, keepdims=True)
        e = kernel(_SCE_EXP_ELEMENTWISE)(x, m, xp.empty(x.shape, dtype))
        s = e.sum(axis=1, keepdims=True)
        weighted = self.class_weight is not None
        cw = _class_weight_for(self.class_weight, x, dtype) if weighted else s
        nll, w, labels = kernel(_SCE_NLL_ELEMENTWISE)(
            t,
            x,
            s,
            m,
            cw,
            n_class,
            rest,
            self.ignore_label,
            weighted,
            xp.empty(t.shape, dtype),
            xp.empty(t.shape, dtype),
            xp.empty(t.shape, t.dtype),
        )
        self._labels = labels
        self._weight = w
        if self.reduce == "mean":
            if self.normalize:
                self._inv_count = kernel(_SCE_INV_COUNT_REDUCTION, "reduce")(
                    t, self.ignore_label
                ).astype(dtype)
            else:
                self._inv_count = 1.0 / max(x.shape[0], 1)
            loss = force_array(nll.sum() * self._inv_count, x.dtype)
        else:
            loss = nll.astype(x.dtype)
        if self.cache_score:
            self._exp = e
            self._exp_sum = s
        return (loss,)

    def _forward_soft(self, x, t):
        dtype = _acc_dtype(x.dtype)
        xp = backend.get_array_module(x)
        e, s, m = _exponentials(x, dtype, shift=True)
        t = t.astype(dtype, copy=False)
        log_y = x.astype(dtype, copy=True)
        log_y -= m
        log_y -= xp.log(s)
        if self.soft_target_loss == "kl-divergence":
            log_t = xp.log(t + dtype.type(_KL_EPS))
            log_t -= log_y
            log_t *= t
            loss = log_t.sum(axis=1)
        else:
            log_y *= t
            loss = -log_y.sum(axis=1)
        del log_y
        if self.reduce == "mean":
            self._inv_count = 1.0 / max(loss.size, 1)
            loss = loss.sum() * self._inv_count
        if self.cache_score:
            self._exp = e
            self._exp_sum = s
        return (force_array(loss, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        grad = SoftmaxCrossEntropyGrad(self)
        # The gradient node takes the cached exponentials over (and overwrites them).
        self._exp = self._exp_sum = None
        return grad.apply((x, t, grad_outputs[0]))[0], None


class SoftmaxCrossEntropyGrad(FunctionNode):
    """The gradient of :class:`SoftmaxCrossEntropy` by ``x``.

    ``c * (softmax(x) * sum(t, axis=1) - t)`` for soft targets and
    ``c * w[t] * (softmax(x) - onehot(t))`` for labels, where ``c`` is the
    output gradient divided by the normalizer (``'mean'``) and ``w[t]`` the
    class weight of the label (0 where it is ignored). Its own backward is
    written with dbr functions, so the default path is differentiable twice
    too.
    """

    def __init__(self, func):
        self.reduce = func.reduce
        self._exp = func._exp
        self._exp_sum = func._exp_sum
        self._labels = func._labels
        self._weight = func._weight
        self._inv_count = func._inv_count

    def _coefficient(self, gloss, dtype):
        """The output gradient, scaled by 1 / the normalizer for ``'mean'``, in ``dtype``."""
        gloss = gloss.astype(dtype, copy=False)
        if self.reduce == "mean":
            inv = self._inv_count
            inv = dtype.type(inv) if isinstance(inv, float) else inv.astype(dtype, copy=False)
            return gloss * inv
        return gloss

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, t, gloss = inputs
        dtype = _acc_dtype(x.dtype)
        e, s = self._exp, self._exp_sum
        self._exp = self._exp_sum = None
        if e is None:
            e, s, _ = _exponentials(x, dtype)
        c = self._coefficient(gloss, dtype)
        gx = e
        if t.dtype.kind == "f":
            c = _expand_class_axis(c)
            t = t.astype(dtype, copy=False)
            scale = t.sum(axis=1, keepdims=True, dtype=dtype)
            scale *= c
            scale /= s
            gx *= scale
            gx -= t * c
            return (force_array(gx, x.dtype),)
        if self._labels is not None:
            t = self._labels
        if type(x) is not numpy.ndarray:
            return (self._forward_gpu(x, e, s, t, c),)
        if self._weight is not None:
            c = c * self._weight
        blockwise(_scale_block, gx, _expand_class_axis(c) / s, cache_blocks=False)
        gx[_label_index(backend.get_array_module(gx), t)] -= c
        return (force_array(gx, x.dtype),)

    def _forward_gpu(self, x, e, s, labels, c):
        xp = backend.get_array_module(x)
        w = self._weight
        if w is None:
            w = xp.ones(labels.shape, e.dtype)
        n_class = x.shape[1]
        rest = labels.size // max(labels.shape[0], 1)
        return kernel(_SCE_GRAD_ELEMENTWISE)(
            e, s, labels, w, c, n_class, rest, c.ndim == 0, xp.empty(x.shape, x.dtype)
        )

    def backward(self, indexes, grad_outputs):
        x, t, gloss = self.get_retained_inputs()
        ggx = grad_outputs[0]
        dtype = x.dtype
        n_class = x.shape[1]
        y = softmax(x, axis=1)
        t_arr = t.array
        weight = None
        if t_arr.dtype.kind == "f":
            target = t_arr.astype(dtype, copy=False)
            total = target.sum(axis=1, keepdims=True)
        else:
            labels = t_arr if self._labels is None else self._labels
            target = _onehot(labels, n_class, dtype)
            total = None
            if self._weight is not None:
                weight = _expand_class_axis(self._weight.astype(dtype, copy=False))
        if self.reduce == "mean":
            c = gloss * self._inv_count
        else:
            c = ops.reshape(gloss, _expand_class_axis(gloss.array).shape)
        if weight is not None:
            c = c * weight
        ret = []
        for i in indexes:
            if i == 0:
                # The Jacobian of softmax (symmetric) applied to u: y * (u - sum(y * u, axis=1)).
                u = ggx * c if total is None else ggx * (c * total)
                ret.append(y * (u - ops.sum(y * u, axis=1, keepdims=True)))
            elif i == 2:
                k = (y - target) if total is None else (y * total - target)
                if weight is not None:
                    k = k * weight
                g = ops.sum(ggx * k, axis=1)
                ret.append(ops.sum(g) * self._inv_count if self.reduce == "mean" else g)
            else:
                ret.append(None)
        return tuple(ret)


def _check_types(func, x, t):
    """Run ``func``'s type check on ``x`` and ``t``, raising InvalidType as ``apply`` would."""
    in_types = type_check.get_types((x, t), "in_types", False)
    try:
        with type_check.get_function_check_context(func):
            func.check_type_forward(in_types)
    except type_check.InvalidType as e:
        msg = f"Invalid operation is performed in: {func.label} (Forward)\n\n{e}"
        raise type_check.InvalidType(e.expect, e.actual, msg=msg) from None


def _double_backprop_loss(x, t, normalize, class_weight, ignore_label, reduce, soft_target_loss):
    """The loss composed of differentiable dbr functions (any order of derivatives)."""
    x = as_variable(x)
    t_arr = t.array if isinstance(t, Variable) else t
    func = SoftmaxCrossEntropy(
        normalize, False, class_weight, ignore_label, reduce, soft_target_loss
    )
    if config.type_check:
        _check_types(func, x.array, t_arr)
    dtype = x.dtype
    xp = x.xp
    log_y = log_softmax(x, axis=1)
    if t_arr.dtype.kind == "f":
        target = t_arr.astype(dtype, copy=False)
        loss = -ops.sum(log_y * target, axis=1)
        if soft_target_loss == "kl-divergence":
            loss = loss + (target * xp.log(target + dtype.type(_KL_EPS))).sum(axis=1)
        count = loss.size
    else:
        has_ignored = _check_labels(t_arr, x.shape[1], ignore_label)
        valid = t_arr != ignore_label
        labels = t_arr * valid
        loss = -ops.get_item(log_y, _label_index(xp, labels))
        weight = None
        if has_ignored is not False:
            weight = valid.astype(dtype)
        if class_weight is not None:
            w = _class_weight_for(class_weight, x.array, dtype)[labels]
            weight = w if weight is None else w * weight
        if weight is not None:
            loss = loss * weight
        count = int(valid.sum()) if normalize else x.shape[0]
    if reduce == "no":
        return loss
    scale = 1.0 / max(count, 1)
    if dtype == numpy.float16:
        return ops.cast(ops.sum(ops.cast(loss, numpy.float32)) * scale, dtype)
    return ops.sum(loss) * scale


def softmax_cross_entropy(
    x,
    t,
    normalize=True,
    cache_score=True,
    class_weight=None,
    ignore_label=-1,
    reduce="mean",
    enable_double_backprop=False,
    soft_target_loss="cross-entropy",
):
    """Cross entropy loss of the softmax of ``x`` (scores along axis 1) against ``t``.

    With labels, the loss at sample ``n`` (and position ``r`` of the axes
    after the second) is ``-w[t] * log(softmax(x)[n, t, r])``, where ``t`` is
    the label there and ``w`` the class weight (1 by default); positions
    whose label equals ``ignore_label`` have loss 0. With soft targets it is
    ``-sum_c t_c log softmax(x)_c`` (``'cross-entropy'``) or
    ``sum_c t_c (log(t_c + 1e-7) - log softmax(x)_c)`` (``'kl-divergence'``).
    ``log softmax`` is computed stably, as ``x - max(x) - log(sum(exp(x - max(x))))``.

    Args:
        x (Variable or array): scores of shape ``(N, C)`` or ``(N, C, d1, ...)``,
            float16, float32 or float64 (float16 is computed in float32).
        t (Variable or array): labels of shape ``(N,)`` or ``(N, d1, ...)``,
            signed integers in ``[0, C)`` or equal to ``ignore_label``; or soft
            targets, a floating array of ``x``'s shape (distributions along
            axis 1). Not differentiable. A label out of range raises
            ValueError: always on NumPy, and in debug mode (``config.debug``)
            on a GPU, where checking needs a device synchronization.
        normalize (bool): with labels and ``reduce='mean'``, divide the sum by
            the number of labels that are not ``ignore_label`` if True, by
            ``N`` if False. Soft targets are always divided by
            ``x.size // C``.
        cache_score (bool): keep the exponentials computed by the forward for
            the backward (faster, uses memory of ``x``'s size); if False,
            backward computes them again.
        class_weight (array or None): weights of shape ``(C,)`` multiplying
            the loss of each label (not the normalizer); labels only.
        ignore_label (int): the label whose positions are ignored.
        reduce (str): ``'mean'`` returns a 0-d array; ``'no'`` the loss at
            each position, of ``t``'s shape (labels) or ``x``'s shape
            without axis 1 (soft targets).
        enable_double_backprop (bool): use the implementation composed of
            log_softmax and indexing. The default implementation is faster
            and can be differentiated twice as well.
        soft_target_loss (str): ``'cross-entropy'`` or ``'kl-divergence'``.

    Returns:
        Variable: the loss, of ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[-1.0, 0.0, 1.0, 2.0], [2.0, 0.0, 1.0, -1.0]], np.float32)
    >>> t = np.array([3, 0], np.int32)
    >>> round(float(softmax_cross_entropy(x, t).array), 5)
    0.44019
    >>> softmax_cross_entropy(x, np.array([3, -1], np.int32), reduce='no').array.round(5)
    array([0.44019, 0.     ], dtype=float32)
    """
    if enable_double_backprop:
        _check_options(normalize, class_weight, ignore_label, reduce, soft_target_loss)
        return _double_backprop_loss(
            x, t, normalize, class_weight, ignore_label, reduce, soft_target_loss
        )
    func = SoftmaxCrossEntropy(
        normalize, cache_score, class_weight, ignore_label, reduce, soft_target_loss
    )
    return func.apply((x, t))[0]
