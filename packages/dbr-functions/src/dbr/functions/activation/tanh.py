"""tanh: the hyperbolic tangent."""

import numpy

from dbr.core import backend
from dbr.core.utils import force_array
from dbr.functions._cpu import blockwise
from dbr.functions._gpu import ACC_PREAMBLE
from dbr.functions._tuning import MIN_PARALLEL_SIZE
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad

_TANH_GRAD_ELEMENTWISE = {
    "in_params": "T y, T gy",
    "out_params": "T gx",
    "operation": "typedef dbr_acc<T>::type A; A v = y; gx = (T)(((A)1 - v * v) * (A)gy)",
    "name": "dbr_tanh_grad",
    "preamble": ACC_PREAMBLE,
}


def _tanh_block(y, x):
    numpy.tanh(x, out=y)


def _tanh_grad_block(gx, y, gy):
    numpy.multiply(y, y, out=gx)
    numpy.subtract(y.dtype.type(1), gx, out=gx)
    gx *= gy


class TanhGrad(UnaryGrad):
    """``gy * (1 - y ** 2)`` from the output ``y`` of tanh and its gradient ``gy``."""

    cpu_block = staticmethod(_tanh_grad_block)
    gpu_kernel = _TANH_GRAD_ELEMENTWISE

    def grad_of_input(self, y, gy, ggx):
        return ggx * gy * y * -2.0


class Tanh(UnaryElementwise):
    """Elementwise ``tanh(x)``; backward needs only the output."""

    retains_output = True
    grad = TanhGrad

    def forward(self, inputs):
        x = inputs[0]
        self.retain_outputs((0,))
        if type(x) is numpy.ndarray:
            # Small arrays skip blockwise's dispatch, which costs more than their pass.
            if x.size < MIN_PARALLEL_SIZE:
                return (force_array(numpy.tanh(x)),)
            return (blockwise(_tanh_block, numpy.empty(x.shape, x.dtype), x, cache_blocks=False),)
        return (force_array(backend.get_array_module(x).tanh(x)),)


def tanh(x):
    """Elementwise hyperbolic tangent, :math:`y_i = \\tanh(x_i)`.

    The gradient is :math:`1 - y_i^2`.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.

    Returns:
        Variable: of ``x``'s shape and dtype, with values in ``[-1, 1]``.

    >>> import numpy as np
    >>> tanh(np.array([-1.0, 0.0, 1.0], np.float32)).array.round(4)
    array([-0.7616,  0.    ,  0.7616], dtype=float32)
    """
    return Tanh().apply((x,))[0]
