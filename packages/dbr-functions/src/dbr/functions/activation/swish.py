"""swish: ``x * sigmoid(beta * x)`` with a parameter ``beta``."""

import numpy

from dbr.core import FunctionNode, backend, ops
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.activation.prelu import check_x_and_param, extended_shape
from dbr.functions.activation.sigmoid import sigmoid

# sigmoid(t) == tanh(t / 2) / 2 + 1/2, as in sigmoid.
_SWISH_ELEMENTWISE = {
    "in_params": "T x, T beta",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A; const A half = 0.5; A v = x;"
        "y = (T)(v * (tanh(v * (A)beta * half) * half + half))"
    ),
    "name": "dbr_swish",
    "preamble": ACC_PREAMBLE,
}


class Swish(FunctionNode):
    """Elementwise ``x * sigmoid(beta * x)``, ``beta`` broadcast from axis 1 of ``x``."""

    def check_type_forward(self, in_types):
        check_x_and_param(in_types, "beta")

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, beta = inputs
        xp = backend.get_array_module(x)
        beta = beta.reshape(extended_shape(beta.shape, x.ndim))
        if xp is not numpy:
            return (kernel(_SWISH_ELEMENTWISE)(x, beta),)
        half = x.dtype.type(0.5)
        y = xp.empty(x.shape, x.dtype)
        xp.multiply(x, beta, out=y)
        y *= half
        xp.tanh(y, out=y)
        y *= half
        y += half
        y *= x
        return (y,)

    def backward(self, indexes, grad_outputs):
        x, beta = self.get_retained_inputs()
        gy = grad_outputs[0]
        shape = extended_shape(beta.shape, x.ndim)
        beta_b = ops.reshape(beta, shape)
        s = sigmoid(x * beta_b)
        # d/dt sigmoid(t) == s * (1 - s), times the chain factors of t = beta * x.
        common = gy * x * s * (1.0 - s)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gy * s + common * beta_b)
            else:
                ret.append(ops.reshape(ops.sum_to(common * x, shape), beta.shape))
        return tuple(ret)


def swish(x, beta):
    """Swish activation, :math:`y = x \\cdot \\mathrm{sigmoid}(\\beta x)`.

    ``swish(x, 0)`` is ``x / 2``, and as :math:`\\beta \\to \\infty` it tends
    to ``relu``.

    Args:
        x (Variable or array): input of shape :math:`(s_B, s_1, ..., s_N)`
            and a floating dtype (float16, float32 or float64); axis 0 is the
            batch.
        beta (Variable or array): the parameter :math:`\\beta`, of ``x``'s
            dtype and shape :math:`(s_1, ..., s_M)` with :math:`0 \\le M \\le
            N`. It is reshaped to :math:`(1, s_1, ..., s_M, 1, ..., 1)` and
            broadcast against ``x``. To learn it, use a link holding it as a
            parameter.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        InvalidType: the dtypes differ or ``beta.shape`` is not
            ``x.shape[1:1 + beta.ndim]``.

    >>> import numpy as np
    >>> x = np.array([[-1.0, 0.0, 2.0]], np.float32)
    >>> swish(x, np.ones(3, np.float32)).array.round(4)
    array([[-0.2689,  0.    ,  1.7616]], dtype=float32)
    """
    return Swish().apply((x, beta))[0]
