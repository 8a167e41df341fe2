"""squared_error and squared_difference: the elementwise squared difference ``(x0 - x1) ** 2``."""

from dbr.core import FunctionNode
from dbr.core.utils import force_array
from dbr.functions.loss._difference import DifferenceLoss


class SquaredError(DifferenceLoss):
    """Elementwise ``(x0 - x1) ** 2``."""

    @staticmethod
    def loss(diff, x0):
        """``diff ** 2``, in place."""
        diff *= diff
        return diff

    @staticmethod
    def grad_x0(x0, x1, gy):
        """``2 * gy * (x0 - x1)``, by :class:`SquaredErrorGrad`."""
        return SquaredErrorGrad().apply((x0, x1, gy))[0]


class SquaredDifference(SquaredError):
    """Elementwise ``(x1 - x2) ** 2`` (:class:`SquaredError` under Chainer's argument names)."""

    _argnames = ("x1", "x2")


class SquaredErrorGrad(FunctionNode):
    """``2 * gy * (x0 - x1)``: the gradient of ``(x0 - x1) ** 2`` by ``x0``."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x0, x1, gy = inputs
        gx = force_array(x0 - x1)
        gx *= gy
        gx *= 2
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x0, x1, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        g_x0 = None
        for i in indexes:
            if i == 2:
                ret.append(ggx * (x0 - x1) * 2.0)
                continue
            if g_x0 is None:
                g_x0 = ggx * gy * 2.0
            ret.append(g_x0 if i == 0 else -g_x0)
        return tuple(ret)


def squared_error(x0, x1):
    """Elementwise squared error ``(x0 - x1) ** 2``.

    Args:
        x0 (Variable or array): float16, float32 or float64 array.
        x1 (Variable or array): an array of the same shape and dtype as ``x0``.

    Returns:
        Variable: ``(x0 - x1) ** 2``, of ``x0``'s shape and dtype.

    >>> import numpy as np
    >>> x0 = np.array([1.0, 2.0, 3.0], np.float32)
    >>> x1 = np.array([2.0, 2.0, 0.5], np.float32)
    >>> squared_error(x0, x1).array
    array([1.  , 0.  , 6.25], dtype=float32)
    """
    return SquaredError().apply((x0, x1))[0]


def squared_difference(x1, x2):
    """Elementwise squared difference ``(x1 - x2) ** 2``.

    The same function as :func:`squared_error`, under Chainer's other name.

    Args:
        x1 (Variable or array): float16, float32 or float64 array.
        x2 (Variable or array): an array of the same shape and dtype as ``x1``.

    Returns:
        Variable: ``(x1 - x2) ** 2``, of ``x1``'s shape and dtype.

    >>> import numpy as np
    >>> squared_difference(np.array([3.0], np.float32), np.array([1.0], np.float32)).array
    array([4.], dtype=float32)
    """
    return SquaredDifference().apply((x1, x2))[0]
