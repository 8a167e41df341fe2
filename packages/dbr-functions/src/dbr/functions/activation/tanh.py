"""tanh: the hyperbolic tangent."""

import numpy

from dbr.core import FunctionNode, Variable, backend
from dbr.core.utils import force_array
from dbr.functions._cpu import MIN_PARALLEL_SIZE, blockwise
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.math._elementwise import FloatInput

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


class Tanh(FloatInput):
    """Elementwise ``tanh(x)``; backward needs only the output."""

    def forward(self, inputs):
        x = inputs[0]
        self.retain_outputs((0,))
        if type(x) is numpy.ndarray:
            # Small arrays skip blockwise's dispatch, which costs more than their pass.
            if x.size < MIN_PARALLEL_SIZE:
                return (force_array(numpy.tanh(x)),)
            return (blockwise(_tanh_block, numpy.empty(x.shape, x.dtype), x, cache_blocks=False),)
        return (force_array(backend.get_array_module(x).tanh(x)),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        if self.backward_on_arrays():
            y = self.output_data[0]
            return (Variable.from_array(TanhGrad().forward((y, gy.array))[0], True),)
        y = self.get_retained_outputs()[0]
        return TanhGrad().apply((y, gy))


class TanhGrad(FunctionNode):
    """``gy * (1 - y ** 2)`` from the output ``y`` of tanh and its gradient ``gy``."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        y, gy = inputs
        if type(y) is not numpy.ndarray:
            return (kernel(_TANH_GRAD_ELEMENTWISE)(y, gy),)
        gx = numpy.empty(y.shape, y.dtype)
        if y.size < MIN_PARALLEL_SIZE:
            _tanh_grad_block(gx, y, gy)
            return (gx,)
        return (blockwise(_tanh_grad_block, gx, y, gy),)

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(ggx * gy * y * -2.0)
            else:
                ret.append(TanhGrad().apply((y, ggx))[0])
        return tuple(ret)


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
