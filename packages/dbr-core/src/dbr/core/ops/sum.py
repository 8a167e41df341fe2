"""sum: reduction by addition over axes."""

import functools
import math

import numpy

from dbr.core import backend, type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import force_array
from dbr.core.ops.cast import cast

# NumPy's pairwise sum runs at about a third of the speed of a BLAS matrix-vector
# product with a vector of ones (which also uses the BLAS threads); below this
# size the call overhead of either dominates.
_MATVEC_MIN_SIZE = 1 << 14
_MATVEC_MIN_ROW = 128
# A row is summed by one BLAS dot product, whose error grows with its length.
_MATVEC_MAX_ROW = 1 << 16


@functools.lru_cache(maxsize=32)
def _ones(n, dtype):
    ones = numpy.ones(n, dtype)
    ones.flags.writeable = False
    return ones


def _sum_array(x, axis, keepdims):
    """``x.sum(axis, keepdims=keepdims)``; on large C-ordered float32/float64 NumPy
    arrays summed over trailing axes, as row sums by a matrix-vector product
    (rows of 128 to 65536 elements), then NumPy's sum of the row sums.

    The result differs from NumPy's pairwise sum only by float rounding.
    """
    if (
        type(x) is not numpy.ndarray
        or x.dtype.char not in "fd"
        or x.size < _MATVEC_MIN_SIZE
        or not x.flags.c_contiguous
    ):
        return x.sum(axis=axis, keepdims=keepdims)
    ndim = x.ndim
    summed = range(ndim) if axis is None else sorted(a % ndim for a in axis)
    lead = ndim - len(summed)
    if list(summed) != list(range(lead, ndim)):
        return x.sum(axis=axis, keepdims=keepdims)
    # Rows of at least _MATVEC_MIN_ROW trailing elements (the whole array when it is 1-d).
    split = ndim - 1
    while split > 0 and math.prod(x.shape[split:]) < _MATVEC_MIN_ROW:
        split -= 1
    split = max(split, lead)
    row = math.prod(x.shape[split:])
    if not _MATVEC_MIN_ROW <= row <= _MATVEC_MAX_ROW:
        return x.sum(axis=axis, keepdims=keepdims)
    sums = x.reshape(-1, row) @ _ones(row, x.dtype)
    if split > lead:
        sums = sums.reshape(x.shape[:split]).sum(axis=tuple(range(lead, split)))
    if keepdims:
        return sums.reshape(x.shape[:lead] + (1,) * (ndim - lead))
    return sums.reshape(x.shape[:lead])


class Sum(FunctionNode):
    """Sum of the elements over some axes (all by default)."""

    def __init__(self, axis=None, keepdims=False):
        if axis is None:
            self.axis = None
        elif isinstance(axis, int):
            self.axis = (axis,)
        elif isinstance(axis, tuple) and all(isinstance(a, int) for a in axis):
            if len(set(axis)) != len(axis):
                raise ValueError(f"sum: duplicate value in axis {axis}")
            self.axis = axis
        else:
            raise TypeError(
                f"sum: expected axis to be None, an int or a tuple of ints, got {axis!r}"
            )
        self.keepdims = keepdims

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        kind = type_check.eval(in_types[0].dtype).kind
        if kind not in "fiub":
            raise type_check.InvalidType("x.dtype.kind in 'fiub'", f"x.dtype.kind == {kind!r}")
        if self.axis is not None:
            ndim = type_check.eval(in_types[0].ndim)
            for a in self.axis:
                if not -ndim <= a < ndim:
                    raise type_check.InvalidType(f"-x.ndim <= {a} < x.ndim", f"x.ndim == {ndim}")
            if len({a % ndim for a in self.axis}) != len(self.axis):
                raise type_check.InvalidType(f"distinct axes {self.axis}", f"x.ndim == {ndim}")

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        self._x_dtype = x.dtype
        return (force_array(_sum_array(x, self.axis, self.keepdims)),)

    def backward(self, indexes, grad_outputs):
        grad = SumGrad(self._x_shape, self._x_dtype, self.axis, self.keepdims)
        return self.apply_gradient(grad, grad_outputs)


class SumGrad(FunctionNode):
    """The gradient of :class:`Sum`: ``gy`` broadcast back to the input's shape, in its dtype.

    The result is a broadcast view of ``gy`` where the dtypes agree. Its own
    gradient is the sum again.

    Args:
        x_shape, x_dtype: the shape and dtype of the summed input.
        axis, keepdims: the Sum's parameters.
    """

    def __init__(self, x_shape, x_dtype, axis, keepdims):
        self.x_shape = x_shape
        self.x_dtype = x_dtype
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, inputs):
        gy = inputs[0]
        self._gy_dtype = gy.dtype
        shape = self.x_shape
        if not self.keepdims:
            if self.axis is None:
                gy = gy.reshape((1,) * len(shape))
            else:
                kept = list(gy.shape)
                for a in sorted(a % len(shape) for a in self.axis):
                    kept.insert(a, 1)
                gy = gy.reshape(kept)
        gx = backend.get_array_module(gy).broadcast_to(gy, shape)
        # NumPy sums small integers in a wider dtype; the gradient keeps the input's.
        return (gx.astype(self.x_dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        ggy = Sum(self.axis, self.keepdims).apply(grad_outputs)[0]
        return (ggy if ggy.dtype == self._gy_dtype else cast(ggy, self._gy_dtype),)


def sum(x, axis=None, keepdims=False):  # Chainer's name
    """Sum the elements of ``x`` over ``axis``.

    Args:
        x (Variable or array): input.
        axis (None, int or tuple of int): axes to sum over (all if None).
        keepdims (bool): keep the summed axes with size 1.

    Returns:
        Variable: the sums.

    >>> import numpy as np
    >>> sum(np.ones((2, 3), np.float32), axis=1).array
    array([3., 3.], dtype=float32)
    """
    return Sum(axis, keepdims).apply((x,))[0]
