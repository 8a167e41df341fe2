"""tile: an array repeated as tiles."""

import numpy

from dbr.core import FunctionNode, Variable, type_check
from dbr.core.backend import get_array_module, get_array_types
from dbr.functions.array._args import check_int_tuple

_float16 = numpy.dtype(numpy.float16)


def _aligned(shape, reps):
    """``shape`` and ``reps`` padded with leading ones to a common length."""
    n = max(len(shape), len(reps))
    return (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(reps)) + tuple(reps)


class Tile(FunctionNode):
    """``numpy.tile(x, reps)``; the gradient sums the tiles."""

    def __init__(self, reps):
        self.reps = reps

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        return (get_array_module(x).tile(x, self.reps),)

    def backward(self, indexes, grad_outputs):
        return TileGrad(self.reps, self._x_shape).apply(grad_outputs)


class TileGrad(FunctionNode):
    """The gradient of :class:`Tile`: the sum of the tiles of ``gy``; its gradient tiles."""

    def __init__(self, reps, x_shape):
        self.reps = reps
        self._x_shape = x_shape

    def forward(self, inputs):
        gy = inputs[0]
        shape, reps = _aligned(self._x_shape, self.reps)
        interleaved = []
        for r, s in zip(reps, shape):
            interleaved += [r, s]
        axes = tuple(range(0, 2 * len(shape), 2))
        gy = gy.reshape(interleaved)
        if gy.dtype == _float16:
            gx = gy.sum(axis=axes, dtype=numpy.float32).astype(_float16)
        else:
            gx = gy.sum(axis=axes, dtype=gy.dtype)
        return (gx.reshape(self._x_shape),)

    def backward(self, indexes, grad_outputs):
        return Tile(self.reps).apply(grad_outputs)


def tile(x, reps):
    """Construct an array by repeating ``x`` the number of times given by ``reps``.

    As ``numpy.tile``: when ``reps`` has fewer entries than ``x`` has
    dimensions, it is padded with leading ones; when it has more, ``x`` is
    promoted with leading axes of length one. The gradient of ``x`` is the sum
    of the gradients of its copies.

    Args:
        x (Variable or array): input.
        reps (int or tuple of ints): the number of repetitions along each
            axis, each non-negative.

    Returns:
        Variable: of ``x``'s dtype and ``max(x.ndim, len(reps))`` dimensions.

    Raises:
        TypeError: ``x`` is not a Variable or an array, or ``reps`` is not an
            int or a tuple of ints.
        ValueError: an entry of ``reps`` is negative.

    >>> import numpy as np
    >>> tile(np.array([0.0, 1.0], np.float32), (2, 2)).array
    array([[0., 1., 0., 1.],
           [0., 1., 0., 1.]], dtype=float32)
    """
    if not isinstance(x, (Variable, *get_array_types())):
        raise TypeError(f"tile: expected x to be a Variable or an array, got {type(x).__name__}")
    reps = check_int_tuple(reps, "reps", "tile")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: expected every element of reps to be >= 0, got {reps}")
    return Tile(reps).apply((x,))[0]
