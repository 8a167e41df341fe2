"""broadcast_to and sum_to: the pair that makes broadcasting differentiable."""

from dbr.core import backend, type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import force_array
from dbr.core.variable import as_variable


def _sum_to_array(x, shape):
    """Sum the array ``x`` down to ``shape`` (the inverse of broadcasting)."""
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1
    )
    # Integers are summed in their own dtype (NumPy would widen them), so that the
    # gradient of an integer Variable keeps its dtype.
    y = x.sum(axis=axes, keepdims=True, dtype=x.dtype if x.dtype.kind in "iu" else None)
    if lead:
        y = y.reshape(shape)
    return force_array(y)


class _ToShape(FunctionNode):
    """A function of one input ``x`` giving an array of the ``shape`` it was made with.

    Subclasses say which ``x.shape`` they accept (``_accepts``, described by
    ``_expectation``) and map the array (``_to_shape``); ``forward`` keeps
    ``x.shape`` for ``backward``.
    """

    _expectation = None

    def __init__(self, shape):
        self._shape = tuple(shape)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        shape = type_check.eval(in_types[0].shape)
        if not self._accepts(shape):
            raise type_check.InvalidType(
                f"x.shape {self._expectation} to {self._shape}", f"x.shape == {shape}"
            )

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (self._to_shape(x),)


class BroadcastTo(_ToShape):
    """Broadcast an array to a shape (NumPy rules)."""

    _expectation = "broadcastable"

    def _accepts(self, shape):
        return len(shape) <= len(self._shape) and all(
            n == 1 or n == m for n, m in zip(reversed(shape), reversed(self._shape))
        )

    def _to_shape(self, x):
        return backend.get_array_module(x).broadcast_to(x, self._shape)

    def backward(self, indexes, grad_outputs):
        return (sum_to(grad_outputs[0], self._x_shape),)


class SumTo(_ToShape):
    """Sum an array down to a shape it broadcasts to."""

    _expectation = "summable"

    def _accepts(self, shape):
        lead = len(shape) - len(self._shape)
        return lead >= 0 and all(m == 1 or m == n for n, m in zip(shape[lead:], self._shape))

    def _to_shape(self, x):
        return _sum_to_array(x, self._shape)

    def backward(self, indexes, grad_outputs):
        return (broadcast_to(grad_outputs[0], self._x_shape),)


def broadcast_to(x, shape):
    """Broadcast ``x`` to ``shape`` following NumPy's rules.

    Args:
        x (Variable or array): input of shape compatible with ``shape``.
        shape (tuple of int): the target shape.

    Returns:
        Variable: of shape ``shape``; its gradient is summed back to ``x.shape``.

    >>> import numpy as np
    >>> broadcast_to(np.ones((1, 3), np.float32), (2, 3)).shape
    (2, 3)
    """
    shape = tuple(shape)
    if getattr(x, "shape", None) == shape:
        return as_variable(x)
    return BroadcastTo(shape).apply((x,))[0]


def sum_to(x, shape):
    """Sum the elements of ``x`` so that the result has ``shape``.

    ``x.shape`` must be ``shape`` broadcast to a larger shape: leading axes are
    summed away and axes of size 1 in ``shape`` are summed with keepdims.

    Args:
        x (Variable or array): input.
        shape (tuple of int): the target shape.

    Returns:
        Variable: of shape ``shape``.

    >>> import numpy as np
    >>> sum_to(np.ones((2, 3), np.float32), (1, 3)).array
    array([[2., 2., 2.]], dtype=float32)
    """
    shape = tuple(shape)
    if getattr(x, "shape", None) == shape:
        return as_variable(x)
    return SumTo(shape).apply((x,))[0]
