"""accuracy: the fraction of samples whose highest-scoring class is the true label."""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array
from dbr.functions._gpu import reads_values
from dbr.functions._labels import explaining_labels


def check_scores_and_labels(in_types):
    """Type check shared by the evaluation functions taking class scores ``y`` and labels ``t``.

    ``y`` is ``(B, C, d1, ..., dk)`` (optionally followed by axes of size 1) and
    ``t`` is ``(B, d1, ..., dk)`` of a signed integer dtype.
    """
    type_check.argname(in_types, ("y", "t"))
    y_type, t_type = in_types
    type_check.expect(y_type.dtype.kind == "f")
    with explaining_labels(
        t_type, "integer class indices (int32) of shape y.shape[:1] + y.shape[2:]"
    ):
        type_check.expect(t_type.dtype.kind == "i")
    t_ndim = type_check.eval(t_type.ndim)
    type_check.expect(
        y_type.ndim >= t_type.ndim + 1,
        y_type.shape[0] == t_type.shape[0],
        y_type.shape[2 : t_ndim + 1] == t_type.shape[1:],
    )
    for i in range(t_ndim + 1, type_check.eval(y_type.ndim)):
        type_check.expect(y_type.shape[i] == 1)


class Accuracy(FunctionNode):
    """Multiclass accuracy (not differentiable: backprop passes no gradient)."""

    def __init__(self, ignore_label=None):
        if ignore_label is not None and not isinstance(ignore_label, (int, numpy.integer)):
            raise TypeError(
                f"accuracy: expected ignore_label to be an int or None, got {ignore_label!r}"
            )
        self.ignore_label = ignore_label

    def check_type_forward(self, in_types):
        check_scores_and_labels(in_types)

    def forward(self, inputs):
        y, t = inputs
        xp = backend.get_array_module(y)
        if t.size == 0:
            return (xp.zeros((), y.dtype),)
        if reads_values(t):
            self._check_labels(t, y.shape[1])
        correct = y.argmax(axis=1).reshape(t.shape) == t
        if self.ignore_label is None:
            total = t.size
        else:
            valid = t != self.ignore_label
            correct &= valid
            total = xp.maximum(valid.sum(), 1)
        return (force_array(correct.sum(dtype=numpy.float64) / total, y.dtype),)

    def _check_labels(self, t, n_class):
        bad = (t < 0) | (t >= n_class)
        if self.ignore_label is not None:
            bad &= t != self.ignore_label
        if bad.any():
            allowed = (
                " (pass ignore_label for padding labels)"
                if self.ignore_label is None
                else f" or ignore_label ({self.ignore_label})"
            )
            raise ValueError(
                f"F.accuracy: t must hold labels in [0, {n_class}) (y has {n_class} classes)"
                f"{allowed}, got {int(t[bad][0])}"
            )

    def backward(self, indexes, grad_outputs):
        return (None,) * len(indexes)


def accuracy(y, t, ignore_label=None):
    """Multiclass classification accuracy of a minibatch.

    The predicted label of sample ``(i, k, ...)`` is
    :math:`\\hat t(i, k, \\ldots) = \\operatorname{argmax}_j y(i, j, k, \\ldots)`;
    the accuracy is the fraction of samples whose predicted label equals ``t``,
    counting only samples whose true label is not ``ignore_label``.

    Args:
        y (Variable or array): class scores of shape ``(B, C, d1, ..., dk)``
            (float16, float32 or float64); trailing axes of size 1 are allowed.
        t (Variable or array): true labels of shape ``(B, d1, ..., dk)``, of a
            signed integer dtype (int32 as in Chainer).
        ignore_label (int or None): samples with this true label are skipped.

    Returns:
        Variable: a 0-d array of ``y``'s dtype. It is 0 when no sample is
        counted (every label ignored, or an empty batch). The function is not
        differentiable: backprop gives ``y`` no gradient.

    Raises:
        ValueError: If a label of ``t`` other than ``ignore_label`` lies outside
            ``[0, C)``; checked always on the CPU, on a GPU only in debug
            mode (``config.debug``), since the check reads a flag back from
            the device. Chainer does not check (such a label counts as wrong).

    >>> import numpy as np
    >>> y = np.array([[0.1, 0.7, 0.2], [8.0, 1.0, 2.0], [-8.0, 1.0, 2.0]], np.float32)
    >>> accuracy(y, np.array([1, 0, 0], np.int32)).array
    array(0.6666667, dtype=float32)
    >>> accuracy(y, np.array([1, 0, 0], np.int32), ignore_label=0).array
    array(1., dtype=float32)
    """
    return Accuracy(ignore_label).apply((y, t))[0]
