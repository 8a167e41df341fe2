"""mean_squared_error: the mean of ``(x0 - x1) ** 2`` over all elements."""

import numpy

from dbr.core import FunctionNode, backend, ops
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.loss._difference import MEAN_ARGS, DifferenceLoss


class MeanSquaredError(DifferenceLoss):
    """``sum((x0 - x1) ** 2) / x0.size`` (accumulated in float32 for float16 inputs)."""

    @staticmethod
    def loss(diff, x0):
        """The mean of ``diff ** 2``, as a 0-d array of ``x0``'s dtype."""
        if diff.dtype == numpy.float16:
            diff = diff.astype(numpy.float32)
        xp = backend.get_array_module(diff)
        return force_array(xp.vdot(diff, diff) / diff.size, x0.dtype)

    @staticmethod
    def grad_x0(x0, x1, gy):
        """``(2 / n) * gy * (x0 - x1)``, by :class:`MeanSquaredErrorGrad`."""
        return MeanSquaredErrorGrad().apply((x0, x1, gy))[0]


class MeanSquaredErrorGrad(FunctionNode):
    """``(2 / n) * gy * (x0 - x1)``: the gradient of the mean squared error by ``x0``."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x0, x1, gy = inputs
        gx = force_array(x0 - x1)
        gx *= gy * x0.dtype.type(2.0 / gx.size)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        x0, x1, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        coeff = 2.0 / x0.size
        ret = []
        g_x0 = None
        for i in indexes:
            if i == 2:
                ret.append(ops.sum(ggx * (x0 - x1)) * coeff)
                continue
            if g_x0 is None:
                g_x0 = ggx * (gy * coeff)
            ret.append(g_x0 if i == 0 else -g_x0)
        return tuple(ret)


@fill(mean_args=MEAN_ARGS)
def mean_squared_error(x0, x1):
    """Mean squared error: ``sum((x0 - x1) ** 2) / N``, where ``N = x0.size``.

    {mean_args}
    >>> x1 = np.array([1.0, 0.0, 3.0, 2.0], np.float32)
    >>> mean_squared_error(x0, x1).array
    array(2., dtype=float32)
    """
    return MeanSquaredError().apply((x0, x1))[0]
