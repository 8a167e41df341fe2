"""binary_accuracy: the fraction of binary labels predicted by the sign of a score."""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array

_IGNORE_LABEL = -1


class BinaryAccuracy(FunctionNode):
    """Binary accuracy (not differentiable: backprop passes no gradient)."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("y", "t"))
        y_type, t_type = in_types
        type_check.expect(
            y_type.dtype.kind == "f",
            t_type.dtype.kind == "i",
            t_type.shape == y_type.shape,
        )

    def forward(self, inputs):
        y, t = inputs
        xp = backend.get_array_module(y)
        correct = (y >= 0) == t
        total = xp.maximum((t != _IGNORE_LABEL).sum(), 1)
        return (force_array(correct.sum(dtype=numpy.float64) / total, y.dtype),)

    def backward(self, indexes, grad_outputs):
        return (None,) * len(indexes)


def binary_accuracy(y, t):
    """Binary classification accuracy of a minibatch.

    The predicted label of element ``i`` is 1 where ``y[i] >= 0`` and 0
    elsewhere; the accuracy is the fraction of elements whose predicted label
    equals ``t``, counting only elements whose ``t`` is not -1.

    Args:
        y (Variable or array): scores of any shape (float16, float32 or float64).
        t (Variable or array): labels of ``y``'s shape and a signed integer
            dtype: 1 (positive), 0 (negative) or -1 (ignored).

    Returns:
        Variable: a 0-d array of ``y``'s dtype; 0 when every label is -1 (or
        there are none). The function is not differentiable: backprop gives
        ``y`` no gradient.

    >>> import numpy as np
    >>> y = np.array([[-2.0, 0.0], [3.0, -5.0]], np.float32)
    >>> binary_accuracy(y, np.array([[0, 0], [1, 1]], np.int32)).array
    array(0.5, dtype=float32)
    >>> binary_accuracy(y, np.array([[0, -1], [1, -1]], np.int32)).array
    array(1., dtype=float32)
    """
    return BinaryAccuracy().apply((y, t))[0]
