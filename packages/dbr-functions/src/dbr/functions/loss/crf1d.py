"""crf1d and argmax_crf1d: the linear-chain CRF's negative log-likelihood and Viterbi path.

Both are composed of differentiable functions (log-sum-exp or max over the
previous label at each step), so gradients of every order follow. Sequences
of different lengths are handled as in Chainer: sorted by decreasing length
and transposed, so that ``xs[i]`` holds the ``i``-th element of every
sequence still running.
"""

import numpy

from dbr.core import FunctionNode, Variable, backend, ops
from dbr.functions._invalid_type import invalid_type
from dbr.functions.math.logsumexp import logsumexp
from dbr.functions.math.minmax import max as _max

_REDUCES = ("mean", "no")


class _ConcatRows(FunctionNode):
    """Concatenation along axis 0; the gradient is split back into the parts."""

    def forward(self, inputs):
        self._bounds = numpy.cumsum([0] + [x.shape[0] for x in inputs]).tolist()
        return (backend.get_array_module(*inputs).concatenate(inputs, axis=0),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        bounds = self._bounds
        return tuple([ops.get_item(gy, slice(bounds[i], bounds[i + 1])) for i in indexes])


def _rows_in_order(head, finished):
    """The rows of the sequences still running (``head``) followed by the finished ones.

    ``finished`` lists the parts in the order the sequences ended, longest
    last; the batch order puts the longest first.
    """
    if not finished:
        return head
    return _ConcatRows().apply((head, *finished[::-1]))[0]


def _check_inputs(who, cost, xs, ys=None):
    """Check the shapes and dtypes of ``cost``, ``xs`` and ``ys`` before computing anything."""
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{who}: expected xs to be a non-empty list of Variables or arrays")
    if ys is not None:
        if not isinstance(ys, (list, tuple)):
            raise TypeError(f"{who}: expected ys to be a list of Variables or arrays")
        if len(ys) != len(xs):
            raise ValueError(f"{who}: expected len(ys) == len(xs) == {len(xs)}, got {len(ys)}")
    cost = _array(cost)
    xs = [_array(x) for x in xs]
    ys = None if ys is None else [_array(y) for y in ys]
    if cost.dtype.kind != "f":
        raise invalid_type(
            who, "cost.dtype.kind == 'f'", f"cost.dtype.kind == {cost.dtype.kind!r}"
        )
    if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
        raise invalid_type(who, "cost.shape == (K, K)", f"cost.shape == {cost.shape}")
    n_label = cost.shape[0]
    previous = None
    for i, x in enumerate(xs):
        if x.dtype != cost.dtype:
            raise invalid_type(who, f"xs[{i}].dtype == cost.dtype", f"{x.dtype} != {cost.dtype}")
        if x.ndim != 2 or x.shape[1] != n_label:
            raise invalid_type(
                who, f"xs[{i}].shape == (B, {n_label})", f"xs[{i}].shape == {x.shape}"
            )
        if previous is not None and x.shape[0] > previous:
            raise invalid_type(
                who,
                f"xs[{i}].shape[0] <= xs[{i - 1}].shape[0] (sorted by decreasing length)",
                f"{x.shape[0]} > {previous}",
            )
        previous = x.shape[0]
        if ys is not None:
            y = ys[i]
            if y.dtype.kind != "i":
                raise invalid_type(
                    who, f"ys[{i}].dtype.kind == 'i'", f"ys[{i}].dtype == {y.dtype}"
                )
            if y.shape != x.shape[:1]:
                raise invalid_type(
                    who, f"ys[{i}].shape == xs[{i}].shape[:1]", f"{y.shape} != {x.shape[:1]}"
                )


def _array(x):
    return x.array if isinstance(x, Variable) else x


def crf1d(cost, xs, ys, reduce="mean"):
    """Negative log-likelihood of a linear-chain conditional random field.

    With :math:`c_{st}` the cost of the transition from label :math:`s` to
    label :math:`t`, :math:`x_{it}` the score of label :math:`t` at position
    :math:`i` and :math:`y_i` the true label there, the loss of a sequence of
    length :math:`l` is

    .. math::
        L = -\\left(\\sum_{i=1}^{l} x_{i y_i} + \\sum_{i=1}^{l-1} c_{y_i y_{i+1}}
            - \\log Z\\right),

    where :math:`Z` sums :math:`\\exp` of the same score over every label
    sequence (computed with the forward algorithm in log space).

    Sequences of different lengths are passed sorted by decreasing length and
    transposed: ``xs[i]`` stacks the ``i``-th elements of the sequences longer
    than ``i``, so ``xs[i].shape[0]`` never increases with ``i``. For example,
    sequences ``a`` (length 3) and ``b`` (length 2) give
    ``xs = [stack([a0, b0]), stack([a1, b1]), stack([a2])]``.

    Args:
        cost (Variable or array): the ``(K, K)`` transition costs (float16,
            float32 or float64).
        xs (list of Variables or arrays): the ``(B_i, K)`` scores of each
            position, of ``cost``'s dtype.
        ys (list of Variables or arrays): the ``(B_i,)`` integer labels of each
            position.
        reduce (str): ``'mean'`` returns the sum of the losses divided by the
            batch size ``B_0``; ``'no'`` returns one loss per sequence.

    Returns:
        Variable: a 0-d array (``'mean'``) or of shape ``(B_0,)`` (``'no'``), of
        ``cost``'s dtype; differentiable by ``cost`` and ``xs``.

    >>> import numpy as np
    >>> cost = np.zeros((2, 2), np.float32)
    >>> xs = [np.zeros((1, 2), np.float32)] * 3
    >>> ys = [np.zeros(1, np.int32)] * 3
    >>> crf1d(cost, xs, ys).array  # log(8): 8 equally likely label sequences
    array(2.0794415, dtype=float32)
    """
    if reduce not in _REDUCES:
        raise ValueError(f"crf1d: expected reduce to be one of {_REDUCES}, got {reduce!r}")
    _check_inputs("crf1d", cost, xs, ys)
    ys = [_array(y) for y in ys]
    n_label = _array(cost).shape[0]
    n_batch = xs[0].shape[0]

    alpha = xs[0]
    finished = []
    for x in xs[1:]:
        batch = x.shape[0]
        if alpha.shape[0] > batch:
            finished.append(ops.get_item(alpha, slice(batch, None)))
            alpha = ops.get_item(alpha, slice(None, batch))
        # alpha[b, j] = logsumexp_i(alpha[b, i] + cost[i, j]) + x[b, j]
        alpha = logsumexp(ops.reshape(alpha, (batch, n_label, 1)) + cost, axis=1) + x
    log_z = logsumexp(_rows_in_order(alpha, finished), axis=1)

    xp = backend.get_array_module(ys[0])
    score = ops.get_item(xs[0], (xp.arange(n_batch), ys[0]))
    finished = []
    for x, y, y_prev in zip(xs[1:], ys[1:], ys[:-1]):
        batch = x.shape[0]
        if score.shape[0] > batch:
            finished.append(ops.get_item(score, slice(batch, None)))
            score = ops.get_item(score, slice(None, batch))
        emission = ops.get_item(x, (xp.arange(batch), y))
        transition = ops.get_item(cost, (y_prev[:batch], y))
        score = score + emission + transition
    loss = log_z - _rows_in_order(score, finished)
    if reduce == "mean":
        return ops.sum(loss) * (1.0 / n_batch)
    return loss


def argmax_crf1d(cost, xs):
    """The most likely label sequences of a linear-chain CRF (Viterbi decoding).

    Args:
        cost (Variable or array): the ``(K, K)`` transition costs.
        xs (list of Variables or arrays): the ``(B_i, K)`` scores of each
            position, sorted and transposed as for :func:`crf1d`.

    Returns:
        tuple: ``(score, path)``. ``score`` is a Variable of shape ``(B_0,)``,
        the score (unnormalized log-likelihood) of each sequence's best label
        sequence, differentiable by ``cost`` and ``xs``. ``path`` is a list of
        ``len(xs)`` int32 arrays: ``path[i]`` of shape ``(B_i,)`` holds the best
        label at position ``i``.

    >>> import numpy as np
    >>> cost = np.array([[0.0, -5.0], [-5.0, 0.0]], np.float32)  # switching is costly
    >>> xs = [np.array([[1.0, 0.0]], np.float32), np.array([[0.0, 2.0]], np.float32)]
    >>> score, path = argmax_crf1d(cost, xs)
    >>> [p.tolist() for p in path], score.array
    ([[1], [1]], array([2.], dtype=float32))
    """
    _check_inputs("argmax_crf1d", cost, xs)
    n_label = _array(cost).shape[0]
    alpha = xs[0]
    finished = []
    back_pointers = []
    for x in xs[1:]:
        batch = x.shape[0]
        if alpha.shape[0] > batch:
            finished.append(ops.get_item(alpha, slice(batch, None)))
            alpha = ops.get_item(alpha, slice(None, batch))
        else:
            finished.append(None)
        scores = ops.reshape(alpha, (batch, n_label, 1)) + cost
        back_pointers.append(scores.array.argmax(axis=1).astype(numpy.int32))
        alpha = _max(scores, axis=1) + x

    alpha_array = _array(alpha)
    xp = backend.get_array_module(alpha_array)
    best = alpha_array.argmax(axis=1).astype(numpy.int32)
    path = [best]
    for pointers, rest in zip(back_pointers[::-1], finished[::-1]):
        best = pointers[xp.arange(best.shape[0]), best]
        if rest is not None:
            best = xp.concatenate([best, rest.array.argmax(axis=1).astype(numpy.int32)])
        path.append(best)
    path.reverse()
    parts = [_max(rest, axis=1) for rest in finished if rest is not None]
    return _rows_in_order(_max(alpha, axis=1), parts), path
