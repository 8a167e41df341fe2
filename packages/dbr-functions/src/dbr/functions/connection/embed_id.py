"""embed_id: rows of an embedding matrix picked by integer IDs."""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.functions._gpu import reads_values


def _check_ids(x, n_vocab, ignore_label, who):
    """Raise ValueError unless every ID that is not ``ignore_label`` lies in ``[0, n_vocab)``.

    Always on NumPy; on other backends only in debug mode (``config.debug``),
    since reading the result back synchronizes the device.
    """
    if x.size == 0 or not reads_values(x):
        return
    bad = (x < 0) | (x >= n_vocab)
    if ignore_label is not None:
        bad &= x != ignore_label
    if bool(bad.any()):
        first = int(x[bad].ravel()[0])
        raise ValueError(
            f"{who}: expected every ID in x to satisfy 0 <= x < len(W) == {n_vocab}"
            + ("" if ignore_label is None else f" or to equal ignore_label ({ignore_label})")
            + f", got {first}"
        )


def add_rows_at(target, ids, rows):
    """``target[ids[i]] += rows[i]`` for every ``i``, rows of repeated IDs summed (in place).

    Args:
        target: a C-contiguous array of shape ``(V, d)``.
        ids: integer array of shape ``(m,)`` with values in ``[0, V)``.
        rows: array of shape ``(m, d)``.
    """
    xp = backend.get_array_module(target)
    n_units = target.shape[1]
    # One scatter over flat element indexes: ufunc.at is fast on a 1-d index
    # and slow on row indexes.
    flat = ids.astype(numpy.intp)[:, None] * n_units + xp.arange(n_units)
    xp.add.at(target.reshape(-1), flat.ravel(), rows.ravel())


class EmbedIDFunction(FunctionNode):
    """``y[..., :] = W[x[...]]`` (zero where ``x == ignore_label``); see :func:`embed_id`."""

    def __init__(self, ignore_label=None):
        self.ignore_label = ignore_label

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W"))
        x_type, w_type = in_types
        type_check.expect(
            x_type.dtype.kind == "i",
            x_type.ndim >= 1,
            w_type.dtype.kind == "f",
            w_type.ndim == 2,
        )

    def forward(self, inputs):
        self.retain_inputs((0,))
        x, W = inputs
        xp = backend.get_array_module(x)
        _check_ids(x, len(W), self.ignore_label, "embed_id")
        self._w_shape = W.shape
        if self.ignore_label is None:
            return (W.take(x, axis=0),)
        ignored = x == self.ignore_label
        y = W.take(xp.where(ignored, 0, x), axis=0) if len(W) else _empty_rows(xp, x, W)
        y[ignored] = 0
        return (y,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        gy = grad_outputs[0]
        return (None, EmbedIDGrad(self._w_shape, self.ignore_label).apply((x, gy))[0])


def _empty_rows(xp, x, W):
    """The output when ``W`` has no rows, so every ID is ``ignore_label``."""
    return xp.zeros(x.shape + (W.shape[1],), W.dtype)


class EmbedIDGrad(FunctionNode):
    """``gW``: the rows of ``gy`` added into ``W``'s shape at the IDs ``x``."""

    _new_outputs = True

    def __init__(self, w_shape, ignore_label=None):
        self.w_shape = w_shape
        self.ignore_label = ignore_label

    def forward(self, inputs):
        self.retain_inputs((0,))
        x, gy = inputs
        xp = backend.get_array_module(gy)
        gW = xp.zeros(self.w_shape, gy.dtype)
        ids = x.ravel()
        rows = gy.reshape(ids.size, self.w_shape[1])
        if self.ignore_label is not None:
            kept = ids != self.ignore_label
            ids = ids[kept]
            rows = rows[kept]
        add_rows_at(gW, ids, rows)
        return (gW,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        ret = []
        for i in indexes:
            if i == 1:
                ret.append(EmbedIDFunction(self.ignore_label).apply((x, grad_outputs[0]))[0])
            else:
                ret.append(None)
        return tuple(ret)


def embed_id(x, W, ignore_label=None):
    """Efficient linear function for one-hot input: word embedding.

    Each ID ``x[...]`` picks a row of ``W``: :math:`y_{\\ldots, j} =
    W_{x_{\\ldots}, j}`, which is :math:`\\mathrm{onehot}(x) W` without
    building the one-hot vectors. IDs equal to ``ignore_label`` give rows of
    zeros. Only ``W`` gets a gradient: the rows of the output gradient added
    up per ID.

    Args:
        x (Variable or array): IDs of any shape with at least one axis and a
            signed integer dtype; each lies in :math:`[0, V)` or equals
            ``ignore_label``.
        W (Variable or array): the embeddings, of shape :math:`(V, d)` and a
            floating dtype (float16, float32 or float64).
        ignore_label (int or None): the ID whose rows are zero.

    Returns:
        Variable: of shape ``x.shape + (d,)`` and ``W``'s dtype.

    Raises:
        InvalidType: ``x`` is not a signed integer array with at least one
            axis, or ``W`` is not a floating matrix.
        ValueError: an ID is out of range; checked always on the CPU, on a
            GPU only in debug mode (``config.debug``: the check reads a flag
            back from the device, which would stall it every call; Chainer
            checks in debug mode only, on either device).

    >>> import numpy as np
    >>> W = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], np.float32)
    >>> embed_id(np.array([2, 1], np.int32), W).array
    array([[2., 2.],
           [1., 1.]], dtype=float32)
    >>> embed_id(np.array([2, -1], np.int32), W, ignore_label=-1).array
    array([[2., 2.],
           [0., 0.]], dtype=float32)
    """
    if ignore_label is not None and (
        isinstance(ignore_label, bool) or not isinstance(ignore_label, (int, numpy.integer))
    ):
        raise TypeError(
            f"embed_id: expected ignore_label to be an int or None, got {ignore_label!r}"
        )
    return EmbedIDFunction(ignore_label).apply((x, W))[0]
