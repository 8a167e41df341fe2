"""prelu: the parametric rectified linear unit."""

from dbr.core import FunctionNode, as_variable, ops, type_check
from dbr.core.utils import force_array
from dbr.functions.activation.leaky_relu import negative_part_coefficient


def extended_shape(param_shape, x_ndim):
    """The shape ``(1, *param_shape, 1, ..., 1)`` that broadcasts a parameter against ``x``."""
    return (1,) + tuple(param_shape) + (1,) * (x_ndim - len(param_shape) - 1)


def check_x_and_param(in_types, name):
    """Type-check ``(x, <name>)``, the parameter broadcast from axis 1 of ``x``.

    ``x`` is floating; the parameter (PReLU's ``W``, Swish's ``beta``) has
    ``x``'s dtype and the shape ``x.shape[1:1 + ndim]``.
    """
    type_check.argname(in_types, ("x", name))
    x_type, param_type = in_types
    type_check.expect(
        x_type.dtype.kind == "f",
        param_type.dtype == x_type.dtype,
        x_type.ndim >= param_type.ndim + 1,
        x_type.shape[1 : 1 + param_type.ndim] == param_type.shape,
    )


class PReLU(FunctionNode):
    """Elementwise ``x`` where ``x >= 0`` and ``W * x`` elsewhere, ``W`` broadcast from axis 1."""

    def check_type_forward(self, in_types):
        check_x_and_param(in_types, "W")

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs
        w = W.reshape(extended_shape(W.shape, x.ndim))
        y = negative_part_coefficient(x, w, x.dtype)
        y *= x
        return (y,)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        shape = extended_shape(W.shape, x.ndim)
        negative = force_array((x.array < 0).astype(x.dtype))
        gy_negative = gy * as_variable(negative)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gy - gy_negative + gy_negative * ops.reshape(W, shape))
            else:
                ret.append(ops.reshape(ops.sum_to(gy_negative * x, shape), W.shape))
        return tuple(ret)


def prelu(x, W):
    """Parametric rectified linear unit.

    .. math:: y_i = \\begin{cases} x_i & (x_i \\ge 0) \\\\ W_j x_i & (x_i < 0) \\end{cases}

    where the slope :math:`W_j` is broadcast along axis 0 and the trailing
    axes of ``x``. The gradient with respect to ``x`` is 1 where ``x >= 0``
    and ``W`` elsewhere; ``W`` gets the sum of ``gy * x`` over the negative
    elements.

    Args:
        x (Variable or array): input of shape :math:`(s_B, s_1, ..., s_N)`
            and a floating dtype (float16, float32 or float64); axis 0 is the
            batch.
        W (Variable or array): the slopes, of ``x``'s dtype and shape
            :math:`(s_1, ..., s_M)` with :math:`0 \\le M \\le N`. It is
            reshaped to :math:`(1, s_1, ..., s_M, 1, ..., 1)` and broadcast
            against ``x``.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        InvalidType: the dtypes differ or ``W.shape`` is not
            ``x.shape[1:1 + W.ndim]``.

    >>> import numpy as np
    >>> x = np.array([[-1.0, 2.0], [-3.0, -4.0]], np.float32)
    >>> prelu(x, np.array([0.1, 0.5], np.float32)).array
    array([[-0.1,  2. ],
           [-0.3, -2. ]], dtype=float32)
    """
    return PReLU().apply((x, W))[0]
