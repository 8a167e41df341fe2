"""The base of the losses of the difference ``x0 - x1`` of two arrays of one shape and dtype."""

from dbr.core import FunctionNode, type_check
from dbr.core.utils import force_array

# The arguments, result and example input of mean_absolute_error and mean_squared_error,
# filled into their docstrings by dbr.functions._docs.fill.
MEAN_ARGS = """\
Args:
    x0 (Variable or array): float16, float32 or float64 array of any shape.
    x1 (Variable or array): an array of the same shape and dtype as ``x0``.

Returns:
    Variable: a 0-d array of ``x0``'s dtype. For float16 inputs the sum is
    accumulated in float32.

>>> import numpy as np
>>> x0 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)"""


class DifferenceLoss(FunctionNode):
    """A loss of ``x0 - x1``: the type check, the retained inputs and the gradient of ``x1``.

    A subclass writes ``loss(diff, x0)``, the output array from ``diff = x0 - x1``
    (a new array it may overwrite), and ``grad_x0(x0, x1, gy)``, the gradient
    with respect to ``x0`` as a Variable; that of ``x1`` is its negation.
    ``_argnames`` names the inputs in type-check messages.
    """

    _argnames = ("x0", "x1")

    def check_type_forward(self, in_types):
        type_check.argname(in_types, self._argnames)
        x0, x1 = in_types
        type_check.expect(x0.dtype.kind == "f", x0.dtype == x1.dtype, x0.shape == x1.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x0, x1 = inputs
        return (self.loss(force_array(x0 - x1), x0),)

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        gx0 = self.grad_x0(x0, x1, grad_outputs[0])
        return tuple([gx0 if i == 0 else -gx0 for i in indexes])
