"""sigmoid: the logistic function ``1 / (1 + exp(-x))``."""

import numpy

from dbr.core import backend
from dbr.functions._cpu import blockwise
from dbr.functions._docs import fill
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions._tuning import MIN_PARALLEL_SIZE
from dbr.functions.math._elementwise import UnaryElementwise, UnaryGrad

# The argument and result of sigmoid and hard_sigmoid (see dbr.functions._docs.fill).
DOCS = {
    "args_unit_interval": """\
Args:
    x (Variable or array): input of a floating dtype (float16, float32 or
        float64), any shape.

Returns:
    Variable: of ``x``'s shape and dtype, with values in ``[0, 1]``.""",
}

# sigmoid(x) == tanh(x / 2) / 2 + 1/2: one transcendental pass that
# never overflows, unlike exp(-x) for large negative x.
_SIGMOID_ELEMENTWISE = {
    "in_params": "T x",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A; const A half = 0.5;y = (T)(tanh((A)x * half) * half + half)"
    ),
    "name": "dbr_sigmoid",
    "preamble": ACC_PREAMBLE,
}
_SIGMOID_GRAD_ELEMENTWISE = {
    "in_params": "T y, T gy",
    "out_params": "T gx",
    "operation": "typedef dbr_acc<T>::type A; A v = y; gx = (T)(((A)1 - v) * v * (A)gy)",
    "name": "dbr_sigmoid_grad",
    "preamble": ACC_PREAMBLE,
}


def _sigmoid_block(y, x):
    half = y.dtype.type(0.5)
    numpy.multiply(x, half, out=y)
    numpy.tanh(y, out=y)
    y *= half
    y += half


def _sigmoid_grad_block(gx, y, gy):
    numpy.subtract(y.dtype.type(1), y, out=gx)
    gx *= y
    gx *= gy


class SigmoidGrad(UnaryGrad):
    """``gy * y * (1 - y)`` from the output ``y`` of sigmoid and its gradient ``gy``."""

    cpu_block = staticmethod(_sigmoid_grad_block)
    gpu_kernel = _SIGMOID_GRAD_ELEMENTWISE

    def grad_of_input(self, y, gy, ggx):
        return ggx * gy * (1.0 - 2.0 * y)


class Sigmoid(UnaryElementwise):
    """Elementwise logistic sigmoid; backward needs only the output."""

    retains_output = True
    grad = SigmoidGrad

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        if xp is not numpy:
            return (kernel(_SIGMOID_ELEMENTWISE)(x),)
        y = numpy.empty(x.shape, x.dtype)
        # Small arrays skip blockwise's dispatch, which costs more than their passes.
        if x.size < MIN_PARALLEL_SIZE:
            _sigmoid_block(y, x)
            return (y,)
        return (blockwise(_sigmoid_block, y, x),)


@fill(**DOCS)
def sigmoid(x):
    """Elementwise logistic sigmoid, :math:`y_i = 1 / (1 + \\exp(-x_i))`.

    Computed as :math:`\\tanh(x_i / 2) / 2 + 1/2`, which is accurate and does
    not overflow for inputs of large magnitude. The gradient is
    :math:`y_i (1 - y_i)`.

    {args_unit_interval}

    >>> import numpy as np
    >>> sigmoid(np.array([-1.0, 0.0, 1.0], np.float32)).array.round(4)
    array([0.2689, 0.5   , 0.7311], dtype=float32)
    """
    return Sigmoid().apply((x,))[0]
