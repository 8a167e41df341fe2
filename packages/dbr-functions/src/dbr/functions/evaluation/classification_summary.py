"""classification_summary: per-class precision, recall, F-beta score and support.

``precision``, ``recall``, ``fbeta_score`` and ``f1_score`` return one of
these together with the support, as in Chainer.
"""

import numbers

import numpy

from dbr.core import FunctionNode, backend
from dbr.functions.evaluation.accuracy import check_scores_and_labels


class ClassificationSummary(FunctionNode):
    """Precision, recall, F-beta score and support of each class (not differentiable)."""

    def __init__(self, label_num, beta, ignore_label, who="classification_summary"):
        if label_num is not None:
            if not isinstance(label_num, (int, numpy.integer)) or isinstance(label_num, bool):
                raise TypeError(
                    f"{who}: expected label_num to be an int or None, got {label_num!r}"
                )
            if label_num < 0:
                raise ValueError(f"{who}: expected label_num >= 0, got {label_num}")
            label_num = int(label_num)
        if not isinstance(beta, numbers.Real):
            raise TypeError(f"{who}: expected beta to be a real number, got {beta!r}")
        if not isinstance(ignore_label, (int, numpy.integer)) or isinstance(ignore_label, bool):
            raise TypeError(f"{who}: expected ignore_label to be an int, got {ignore_label!r}")
        self.label_num = label_num
        self.beta = float(beta)
        self.ignore_label = int(ignore_label)
        self._who = who

    def check_type_forward(self, in_types):
        check_scores_and_labels(in_types)

    def forward(self, inputs):
        y, t = inputs
        xp = backend.get_array_module(y)
        ignored = (t == self.ignore_label).ravel()
        true = t.ravel()
        if bool(((true < 0) & ~ignored).any()):
            raise ValueError(
                f"{self._who}: expected t to hold labels >= 0 or ignore_label "
                f"({self.ignore_label}), got {int(true[~ignored].min())}"
            )
        label_num = self.label_num
        if label_num is None:
            label_num = int(true.max()) + 1 if true.size else 0
        # Ignored samples are counted in the extra bin ``label_num``, which is dropped.
        true = xp.where(ignored, label_num, true)
        pred = xp.where(ignored, label_num, y.argmax(axis=1).ravel())
        n_bins = label_num + 1
        support = xp.bincount(true, minlength=n_bins)[:label_num]
        relevant = xp.bincount(pred, minlength=n_bins)[:label_num]
        tp = xp.bincount(xp.where(pred == true, true, label_num), minlength=n_bins)[:label_num]
        beta2 = self.beta * self.beta
        with numpy.errstate(divide="ignore", invalid="ignore"):
            precision = tp / relevant
            recall = tp / support
            fbeta = (1 + beta2) * precision * recall / (beta2 * precision + recall)
        return precision, recall, fbeta, support

    def backward(self, indexes, grad_outputs):
        return (None,) * len(indexes)


def classification_summary(y, t, label_num=None, beta=1.0, ignore_label=-1):
    """Precision, recall, F-beta score and support of each class of a minibatch.

    With :math:`\\mathrm{tp}`, :math:`\\mathrm{fp}` and :math:`\\mathrm{fn}`
    the numbers of true positives, false positives and false negatives of a
    class (the predicted class of a sample is the argmax of ``y`` over axis 1):

    - precision: :math:`\\mathrm{tp} / (\\mathrm{tp} + \\mathrm{fp})`;
    - recall: :math:`\\mathrm{tp} / (\\mathrm{tp} + \\mathrm{fn})`;
    - F-beta score: :math:`(1 + \\beta^2) P R / (\\beta^2 P + R)`, the
      weighted harmonic mean of precision :math:`P` and recall :math:`R`;
    - support: the number of samples whose true label is the class.

    A quantity whose denominator is 0 (a class never predicted, or absent
    from ``t``) is NaN. Samples whose true label is ``ignore_label`` are not
    counted; setting it to a label in ``[0, label_num)`` makes that class's
    entries meaningless.

    Args:
        y (Variable or array): class scores of shape ``(B, C, d1, ..., dk)``
            (float16, float32 or float64).
        t (Variable or array): true labels of shape ``(B, d1, ..., dk)`` and a
            signed integer dtype, each in ``[0, label_num)`` or ``ignore_label``.
        label_num (int or None): the number of classes; None means
            ``max(t) + 1``.
        beta (float): the weight of recall against precision in the F-beta score.
        ignore_label (int): samples with this true label are not counted.

    Returns:
        tuple of Variables: ``(precision, recall, fbeta_score, support)``, each
        of shape ``(label_num,)``; the first three are float64 and the support
        int64, as in Chainer. Not differentiable: backprop gives ``y`` no
        gradient.

    >>> import numpy as np
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], np.float32)
    >>> p, r, f, s = classification_summary(y, np.array([0, 1, 1], np.int32))
    >>> p.array, r.array, s.array
    (array([0.5, 1. ]), array([1. , 0.5]), array([1, 2]))
    """
    return tuple(ClassificationSummary(label_num, beta, ignore_label).apply((y, t)))


def precision(y, t, label_num=None, ignore_label=-1):
    """Per-class precision and support: ``(precision, support)`` of :func:`classification_summary`.

    >>> import numpy as np
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], np.float32)
    >>> precision(y, np.array([0, 1, 1], np.int32))[0].array
    array([0.5, 1. ])
    """
    ret = ClassificationSummary(label_num, 1.0, ignore_label, "precision").apply((y, t))
    return ret[0], ret[3]


def recall(y, t, label_num=None, ignore_label=-1):
    """Per-class recall and support: ``(recall, support)`` of :func:`classification_summary`.

    >>> import numpy as np
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], np.float32)
    >>> recall(y, np.array([0, 1, 1], np.int32))[0].array
    array([1. , 0.5])
    """
    ret = ClassificationSummary(label_num, 1.0, ignore_label, "recall").apply((y, t))
    return ret[1], ret[3]


def fbeta_score(y, t, label_num=None, beta=1.0, ignore_label=-1):
    """Per-class F-beta score and support: ``(fbeta_score, support)`` of
    :func:`classification_summary`.

    >>> import numpy as np
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], np.float32)
    >>> fbeta_score(y, np.array([0, 1, 1], np.int32), beta=2.0)[0].array
    array([0.83333333, 0.55555556])
    """
    ret = ClassificationSummary(label_num, beta, ignore_label, "fbeta_score").apply((y, t))
    return ret[2], ret[3]


def f1_score(y, t, label_num=None, ignore_label=-1):
    """Per-class F1 score and support: ``(f1_score, support)`` of :func:`classification_summary`.

    >>> import numpy as np
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], np.float32)
    >>> f1_score(y, np.array([0, 1, 1], np.int32))[0].array
    array([0.66666667, 0.66666667])
    """
    ret = ClassificationSummary(label_num, 1.0, ignore_label, "f1_score").apply((y, t))
    return ret[2], ret[3]
