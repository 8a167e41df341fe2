"""maximum and minimum of two inputs, elementwise, with broadcasting."""

from dbr.core import FunctionNode, backend, type_check
from dbr.core.ops import sum_to
from dbr.core.utils import force_array
from dbr.functions._docs import fill

# The gradient, arguments and result of maximum and minimum (see dbr.functions._docs.fill).
DOCS = {
    "args_pair": """\
The gradient flows to the input that was selected; where they are equal,
it goes to ``x1``.

Args:
    x1 (Variable or array): input of a floating dtype.
    x2 (Variable or array): input of ``x1``'s dtype; the shapes of ``x1``
        and ``x2`` broadcast together.

Returns:
    Variable: of the broadcast shape and the inputs' dtype.""",
}


class MaskGrad(FunctionNode):
    """Pass ``gy`` where ``mask`` is true (or false, with ``invert=True``) and 0 elsewhere.

    The gradient of a function that picks each output element from one of
    its inputs; it is linear and self-adjoint, so its backward is itself.

    Args:
        mask: a boolean array of the gradient's shape.
        invert (bool): pass ``gy`` where ``mask`` is false instead.
    """

    def __init__(self, mask, invert=False):
        self.mask = mask
        self.invert = invert

    def forward(self, inputs):
        gy = inputs[0]
        xp = backend.get_array_module(gy)
        mask = xp.logical_not(self.mask) if self.invert else self.mask
        # Multiplying by a 0/1 array is many times faster than xp.where on the CPU.
        gx = force_array(mask.astype(gy.dtype))
        gx *= gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        return MaskGrad(self.mask, self.invert).apply(grad_outputs)


def _check_binary(in_types):
    type_check.argname(in_types, ("x1", "x2"))
    x1, x2 = in_types
    type_check.expect(x1.dtype.kind == "f", x2.dtype == x1.dtype)
    type_check.expect_broadcast_shapes(x1.shape, x2.shape)


class _Select(FunctionNode):
    """Base of maximum/minimum: ``x1`` gets the gradient where ``_picks_x1`` holds."""

    ufunc = None

    def check_type_forward(self, in_types):
        _check_binary(in_types)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x1, x2 = inputs
        return (force_array(getattr(backend.get_array_module(x1), self.ufunc)(x1, x2)),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        x1, x2 = self.get_retained_inputs()
        mask = self._picks_x1(x1.array, x2.array)
        return tuple(
            [sum_to(MaskGrad(mask, i == 1).apply((gy,))[0], (x1, x2)[i].shape) for i in indexes]
        )


class Maximum(_Select):
    """Elementwise ``maximum(x1, x2)``; at ties the gradient goes to ``x1``."""

    ufunc = "maximum"

    @staticmethod
    def _picks_x1(x1, x2):
        return x1 >= x2


class Minimum(_Select):
    """Elementwise ``minimum(x1, x2)``; at ties the gradient goes to ``x1``."""

    ufunc = "minimum"

    @staticmethod
    def _picks_x1(x1, x2):
        return x1 <= x2


@fill(**DOCS)
def maximum(x1, x2):
    """Elementwise maximum of two inputs, :math:`y_i = \\max(x1_i, x2_i)`.

    {args_pair}

    >>> import numpy as np
    >>> maximum(np.array([1.0, 4.0], np.float32), np.array([3.0, 2.0], np.float32)).array
    array([3., 4.], dtype=float32)
    """
    return Maximum().apply((x1, x2))[0]


@fill(**DOCS)
def minimum(x1, x2):
    """Elementwise minimum of two inputs, :math:`y_i = \\min(x1_i, x2_i)`.

    {args_pair}

    >>> import numpy as np
    >>> minimum(np.array([1.0, 4.0], np.float32), np.array([3.0, 2.0], np.float32)).array
    array([1., 2.], dtype=float32)
    """
    return Minimum().apply((x1, x2))[0]
