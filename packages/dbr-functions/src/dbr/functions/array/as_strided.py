"""as_strided: a strided view of an input's elements, with a scatter-add gradient."""

import operator

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module


def _as_ints(values, name):
    try:
        return tuple([operator.index(v) for v in values])
    except TypeError:
        expected = "an int" if name == "storage_offset" else "a tuple of ints"
        got = values[0] if name == "storage_offset" else values
        raise TypeError(f"as_strided: expected {name} to be {expected}, got {got!r}") from None


def _reach(shape, strides, offset):
    """The first and last positions ``shape``, ``strides`` and ``offset`` read (None if none)."""
    if 0 in shape:
        return None
    low = sum([(n - 1) * s for n, s in zip(shape, strides) if s < 0])
    high = sum([(n - 1) * s for n, s in zip(shape, strides) if s > 0])
    return offset + low, offset + high


def _stride_array(array, shape, strides, storage_offset):
    """A view of ``array``'s elements in C order through a shape, strides and offset in elements.

    (Chainer's helper name, which its tests read.) The view is of ``array``'s
    memory when it is C-contiguous, else of a C-ordered copy.

    Raises:
        ValueError: a position the view reads lies outside ``array``.
    """
    xp = get_array_module(array)
    flat = xp.ascontiguousarray(array).reshape(-1)
    reach = _reach(shape, strides, storage_offset)
    if reach is not None and (reach[0] < 0 or reach[1] >= flat.size):
        raise ValueError(
            f"as_strided: the view reads elements {reach[0]} to {reach[1]} of {flat.size}"
        )
    itemsize = flat.dtype.itemsize
    return xp.lib.stride_tricks.as_strided(
        flat[storage_offset:], shape=shape, strides=tuple([s * itemsize for s in strides])
    )


class AsStrided(FunctionNode):
    """Read ``x``'s elements (in C order) through a shape, strides and offset in elements."""

    def __init__(self, shape, strides, storage_offset):
        self.shape = shape
        self.strides = strides
        self.storage_offset = storage_offset
        self._span = _reach(shape, strides, storage_offset)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        if self._span is None:
            return
        size = type_check.eval(in_types[0].size)
        first, last = self._span
        if first < 0 or last >= size:
            raise type_check.InvalidType(
                "every element the shape, strides and storage_offset reach lies in [0, x.size)",
                f"elements {first} to {last} are reached, x.size == {size}",
            )

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        xp = get_array_module(x)
        if self._span is None:
            return (xp.empty(self.shape, x.dtype),)
        view = _stride_array(x, self.shape, self.strides, self.storage_offset)
        return (view.copy(),)

    def backward(self, indexes, grad_outputs):
        grad = AsStridedGrad(self._x_shape, self.shape, self.strides, self.storage_offset)
        return grad.apply(grad_outputs)


class AsStridedGrad(FunctionNode):
    """The gradient of :class:`AsStrided`: each output gradient added to the element it read."""

    def __init__(self, x_shape, shape, strides, storage_offset):
        self.x_shape = x_shape
        self.shape = shape
        self.strides = strides
        self.storage_offset = storage_offset

    def forward(self, inputs):
        gy = inputs[0]
        xp = get_array_module(gy)
        size = 1
        for n in self.x_shape:
            size *= n
        gx = xp.zeros(size, gy.dtype)
        if gy.size:
            positions = _stride_array(
                xp.arange(size), self.shape, self.strides, self.storage_offset
            )
            xp.add.at(gx, positions.reshape(-1), gy.reshape(-1))
        return (gx.reshape(self.x_shape),)

    def backward(self, indexes, grad_outputs):
        return AsStrided(self.shape, self.strides, self.storage_offset).apply(grad_outputs)


def as_strided(x, shape, strides, storage_offset=None):
    """Read the elements of ``x`` through a new shape, strides and offset.

    ``y[i_1, ..., i_n] = flat[storage_offset + i_1 * strides[0] + ... +
    i_n * strides[n - 1]]``, where ``flat`` is ``x``'s elements in C order
    (its memory when ``x`` is C-contiguous). Strides and offset count
    elements, not bytes (unlike :func:`numpy.lib.stride_tricks.as_strided`);
    windows may overlap, and strides may be zero or negative. The gradient of
    an element of ``x`` is the sum of the output gradients of every position
    that reads it.

    Args:
        x (Variable or array): the elements to read, of any shape.
        shape (tuple of int): the output's shape.
        strides (tuple of int): one stride per output axis, in elements.
        storage_offset (int or None): the position in ``flat`` of
            ``y[0, ..., 0]``; None means 0.

    Returns:
        Variable: of ``shape`` and ``x``'s dtype, a new array (not a view).

    Raises:
        ValueError: ``strides`` and ``shape`` differ in length, or a dimension
            or the offset is negative.

    >>> import numpy as np
    >>> as_strided(np.arange(4, dtype=np.float32), (3, 2), (1, 1), 0).array
    array([[0., 1.],
           [1., 2.],
           [2., 3.]], dtype=float32)
    """
    shape = _as_ints(shape, "shape")
    strides = _as_ints(strides, "strides")
    if storage_offset is None:
        storage_offset = 0
    else:
        storage_offset = _as_ints((storage_offset,), "storage_offset")[0]
    if len(shape) != len(strides):
        raise ValueError(
            f"as_strided: expected one stride per axis of shape {shape}, got strides {strides}"
        )
    if any(n < 0 for n in shape):
        raise ValueError(f"as_strided: expected non-negative dimensions, got shape {shape}")
    if storage_offset < 0:
        raise ValueError(f"as_strided: expected storage_offset >= 0, got {storage_offset}")
    return AsStrided(shape, strides, storage_offset).apply((x,))[0]
