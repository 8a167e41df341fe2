"""black_out: the BlackOut loss, a softmax over the true label and sampled negatives.

Composed of differentiable functions, so gradients of every order follow.
"""

from dbr.core import Variable, ops
from dbr.functions._invalid_type import invalid_type
from dbr.functions.math.average import average
from dbr.functions.math.expm1 import expm1
from dbr.functions.math.exponential import exp
from dbr.functions.math.logsumexp import logsumexp

_REDUCES = ("mean", "no")


def _check_inputs(x, t, W, samples):
    """The checks of a type check, on the arrays, before anything is computed."""
    checks = [
        ("x.dtype.kind == 'f'", x.dtype.kind == "f", f"x.dtype == {x.dtype}"),
        ("x.ndim == 2", x.ndim == 2, f"x.ndim == {x.ndim}"),
        ("t.dtype.kind == 'i'", t.dtype.kind == "i", f"t.dtype == {t.dtype}"),
        ("t.shape == x.shape[:1]", t.shape == x.shape[:1], f"{t.shape} != {x.shape[:1]}"),
        ("W.dtype == x.dtype", W.dtype == x.dtype, f"{W.dtype} != {x.dtype}"),
        ("W.ndim == 2", W.ndim == 2, f"W.ndim == {W.ndim}"),
        ("W.shape[1] == x.shape[1]", W.shape[1:] == x.shape[1:], f"{W.shape} vs {x.shape}"),
        (
            "samples.dtype.kind == 'i'",
            samples.dtype.kind == "i",
            f"samples.dtype == {samples.dtype}",
        ),
        ("samples.ndim == 2", samples.ndim == 2, f"samples.ndim == {samples.ndim}"),
        (
            "samples.shape[0] == x.shape[0]",
            samples.shape[:1] == x.shape[:1],
            f"{samples.shape[:1]} != {x.shape[:1]}",
        ),
    ]
    for expect, ok, actual in checks:
        if not ok:
            raise invalid_type("black_out", expect, actual)


def _array(x):
    return x.array if isinstance(x, Variable) else x


def black_out(x, t, W, samples, reduce="mean"):
    """BlackOut loss (Ji et al., 2016).

    With the likelihood of a label :math:`y` over the true label :math:`t`
    and the negative samples :math:`S`,

    .. math::
        p(y) = \\frac{\\exp(W_y^\\top x)}
                    {\\exp(W_t^\\top x) + \\sum_{s \\in S} \\exp(W_s^\\top x)},

    the loss of a sample is

    .. math::
        -\\log p(t) - \\sum_{s \\in S} \\log(1 - p(s)).

    Args:
        x (Variable or array): inputs of shape ``(B, D)`` (float16, float32 or
            float64).
        t (Variable or array): true labels of shape ``(B,)``, integers in
            ``[0, V)``.
        W (Variable or array): the weight matrix of shape ``(V, D)``, of ``x``'s
            dtype.
        samples (Variable or array): the negative samples, integers in
            ``[0, V)`` of shape ``(B, S)``.
        reduce (str): ``'mean'`` averages the losses over the batch; ``'no'``
            returns one loss per sample.

    Returns:
        Variable: a 0-d array (``'mean'``) or of shape ``(B,)`` (``'no'``), of
        ``x``'s dtype; differentiable by ``x`` and ``W``.

    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0]], np.float32)
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0]], np.float32)
    >>> # p(t=1) = e / (e + 1), p(s=0) = 1 / (e + 1): the loss is 2 log(1 + 1/e)
    >>> black_out(x, np.array([1], np.int32), W, np.array([[0]], np.int32)).array
    array(0.6265234, dtype=float32)
    """
    if reduce not in _REDUCES:
        raise ValueError(f"black_out: expected reduce to be one of {_REDUCES}, got {reduce!r}")
    t = _array(t)
    samples = _array(samples)
    _check_inputs(_array(x), t, _array(W), samples)
    n_batch, n_dim = x.shape
    x3 = ops.reshape(x, (n_batch, 1, n_dim))
    neg_y = ops.sum(ops.get_item(W, samples) * x3, axis=2)
    pos_y = ops.sum(ops.get_item(W, t) * x, axis=1)
    if samples.shape[1] == 0:
        loss = pos_y * 0.0
    else:
        # log Z = log(exp(pos_y) + sum(exp(neg_y))), shifted by a constant for
        # stability (any constant gives the same value and derivatives).
        neg_log_z = logsumexp(neg_y, axis=1)
        xp = pos_y.xp
        shift = xp.maximum(pos_y.array, neg_log_z.array)
        log_z = ops.log(exp(pos_y - shift) + exp(neg_log_z - shift)) + shift
        log_p_neg = neg_y - ops.reshape(log_z, (n_batch, 1))
        # log(1 - p) = log(-expm1(log p)), accurate when p is close to 1 too.
        log_not_neg = ops.log(-expm1(log_p_neg))
        loss = log_z - pos_y - ops.sum(log_not_neg, axis=1)
    if reduce == "mean":
        return average(loss)
    return loss
