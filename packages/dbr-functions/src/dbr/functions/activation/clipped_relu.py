"""clipped_relu: the rectified linear unit capped at ``z``."""

import numbers

import numpy

from dbr.core import as_variable, backend
from dbr.core.utils import force_array, force_type
from dbr.functions._gpu import ElementwiseGrad
from dbr.functions.math._elementwise import FloatInput

_CLIPPED_RELU_GRAD_ELEMENTWISE = {
    "in_params": "T y, T gy, float64 cap",
    "out_params": "T gx",
    "operation": "gx = y > (T)0 && y < (T)cap ? gy : (T)0",
    "name": "dbr_clipped_relu_grad",
}


class ClippedReLU(FloatInput):
    """Elementwise ``min(max(x, 0), z)``; backward needs only the output."""

    def __init__(self, z=20.0):
        if isinstance(z, bool) or not isinstance(z, numbers.Real):
            raise TypeError(f"clipped_relu: expected z to be a real number, got {z!r}")
        if not z > 0:
            raise ValueError(f"clipped_relu: expected z > 0, got {z!r}")
        self.cap = float(z)

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        y = xp.clip(x, force_type(x.dtype, 0), force_type(x.dtype, self.cap))
        return (force_array(y, x.dtype),)

    def backward(self, indexes, grad_outputs):
        # 0 < y < z exactly where 0 < x < z, the open interval where the slope is 1.
        y = self.output_data[0]
        if type(y) is not numpy.ndarray:
            return ElementwiseGrad(_CLIPPED_RELU_GRAD_ELEMENTWISE, y, self.cap).apply(grad_outputs)
        inside = y > 0
        inside &= y < force_type(y.dtype, self.cap)
        return (grad_outputs[0] * as_variable(force_array(inside.astype(y.dtype))),)


def clipped_relu(x, z=20.0):
    """Clipped rectified linear unit, :math:`y_i = \\min(\\max(x_i, 0), z)`.

    The gradient is 1 where ``0 < x < z`` and 0 elsewhere.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        z (float): the cap, a positive number.

    Returns:
        Variable: of ``x``'s shape and dtype, with values in ``[0, z]``.

    Raises:
        TypeError: ``z`` is not a real number.
        ValueError: ``z`` is not positive.

    >>> import numpy as np
    >>> clipped_relu(np.array([-1.0, 0.5, 3.0], np.float32), z=2.0).array
    array([0. , 0.5, 2. ], dtype=float32)
    """
    return ClippedReLU(z).apply((x,))[0]
