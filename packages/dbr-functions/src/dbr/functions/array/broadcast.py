"""broadcast: broadcast several inputs against each other (NumPy rules)."""

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.core.ops import sum_to
from dbr.core.variable import as_variable


class Broadcast(FunctionNode):
    """Broadcast any number of inputs to their common shape; one output per input."""

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() >= 1)
        type_check.expect_broadcast_shapes(*[t.shape for t in in_types])

    def forward(self, inputs):
        self._shapes = tuple([x.shape for x in inputs])
        xp = get_array_module(*inputs)
        return tuple(xp.broadcast_arrays(*inputs))

    def backward(self, indexes, grad_outputs):
        return tuple(
            [
                None if grad_outputs[i] is None else sum_to(grad_outputs[i], self._shapes[i])
                for i in indexes
            ]
        )


def broadcast(*args):
    """Broadcast the inputs against each other, following NumPy's rules.

    Each output is its input repeated along the axes where the input has
    size 1 (or lacks the axis); the gradient of each input is the gradient of
    its output summed back to the input's shape.

    Args:
        *args (Variable or array): inputs of any dtypes whose shapes broadcast
            together.

    Returns:
        Variable or tuple of Variable: with one input, that input as a
        Variable; otherwise one Variable per input, each of the broadcast
        shape and of its input's dtype.

    >>> import numpy as np
    >>> a, b = broadcast(np.zeros((2, 1), np.float32), np.zeros(3, np.float32))
    >>> a.shape, b.shape
    ((2, 3), (2, 3))
    """
    if len(args) == 1:
        return as_variable(args[0])
    return Broadcast().apply(args)
