"""relu: the rectified linear unit, ``max(x, 0)``."""

import numpy

from dbr.core import FunctionNode, backend
from dbr.core.utils import force_array
from dbr.functions._cpu import blockwise
from dbr.functions._gpu import kernel
from dbr.functions._tuning import MIN_PARALLEL_SIZE
from dbr.functions.math._elementwise import UnaryElementwise

_RELU_GRAD_ELEMENTWISE = {
    "in_params": "T y, T gy",
    "out_params": "T gx",
    "operation": "gx = y > (T)0 ? gy : (T)0",
    "name": "dbr_relu_grad",
}


def _relu_block(y, x):
    # y holds zeros: NumPy's maximum against a scalar misses its vectorised loop.
    numpy.maximum(x, y, out=y)


def _relu_grad_block(gx, y, gy):
    numpy.greater(y, 0, out=gx)
    gx *= gy


class ReLU(UnaryElementwise):
    """Elementwise ``max(x, 0)``; backward needs only the output."""

    retains_output = True

    def forward(self, inputs):
        x = inputs[0]
        self.retain_outputs((0,))
        if type(x) is not numpy.ndarray:
            return (force_array(backend.get_array_module(x).maximum(x, x.dtype.type(0))),)
        # Against an array of zeros (calloc'd, written in place) NumPy's maximum
        # is about four times as fast as against a scalar.
        y = numpy.zeros(x.shape, x.dtype)
        # Small arrays skip blockwise's dispatch, which costs more than their pass.
        if x.size < MIN_PARALLEL_SIZE:
            _relu_block(y, x)
        else:
            blockwise(_relu_block, y, x, cache_blocks=False)
        return (y,)

    def backward(self, indexes, grad_outputs):
        return ReLUGrad(self.output_data[0]).apply_in_backward(grad_outputs)


class ReLUGrad(FunctionNode):
    """``gy * (y > 0)`` for the output ``y`` of relu.

    Linear in ``gy`` with a constant mask, so its gradient is itself.

    Args:
        y: the output array of relu.
    """

    def __init__(self, y):
        self.y = y

    def forward(self, inputs):
        gy = inputs[0]
        y = self.y
        if type(gy) is not numpy.ndarray:
            return (kernel(_RELU_GRAD_ELEMENTWISE)(y, gy),)
        gx = numpy.empty(y.shape, gy.dtype)
        if y.size < MIN_PARALLEL_SIZE:
            _relu_grad_block(gx, y, gy)
            return (gx,)
        return (blockwise(_relu_grad_block, gx, y, gy),)

    def backward(self, indexes, grad_outputs):
        return ReLUGrad(self.y).apply(grad_outputs)


def relu(x):
    """Rectified linear unit, :math:`y_i = \\max(x_i, 0)`.

    The gradient is 1 where ``x > 0`` and 0 elsewhere (0 at ``x == 0``).

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> relu(np.array([[-1.0, 0.0], [2.0, -3.0]], np.float32)).array
    array([[0., 0.],
           [2., 0.]], dtype=float32)
    """
    return ReLU().apply((x,))[0]
