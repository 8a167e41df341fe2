"""as_strided: a strided view of the memory an input lies in, with a layout-agnostic gradient."""

import operator

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array


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


def _c_strides(shape):
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _numpy_root(array):
    """The last NumPy array down ``array``'s chain of bases (views made by
    ``numpy.lib.stride_tricks`` have a non-array link in it)."""
    root = array
    base = array.base
    while base is not None:
        if isinstance(base, numpy.ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


def _memory(array):
    """The memory ``array`` lies in, as ``(flat, strides, offset)`` in elements of its dtype.

    ``flat`` is a 1-d array of ``array``'s dtype over the whole allocation
    (the base array that owns a NumPy view's data, the memory block of a CuPy
    array); ``strides`` and ``offset`` place ``array``'s elements in it. When
    the allocation cannot be read in elements of that dtype (a view of
    another itemsize, a non-contiguous owner), ``flat`` is a C-ordered copy of
    ``array`` and ``strides`` are its C strides.
    """
    itemsize = array.dtype.itemsize
    xp = get_array_module(array)
    if all(s % itemsize == 0 for s in array.strides):
        strides = tuple([s // itemsize for s in array.strides])
        if xp is numpy:
            root = _numpy_root(array)
            if root.flags.c_contiguous or root.flags.f_contiguous:
                raw = root.ravel(order="K").view(numpy.uint8)
                start = array.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
                if raw.size % itemsize == 0 and start % itemsize == 0:
                    return raw.view(array.dtype), strides, start // itemsize
        else:
            memory = array.data.mem
            start = array.data.ptr - memory.ptr
            if start % itemsize == 0:
                pointer = xp.cuda.MemoryPointer(memory, 0)
                flat = xp.ndarray((memory.size // itemsize,), array.dtype, pointer)
                return flat, strides, start // itemsize
    return xp.ascontiguousarray(array).reshape(-1), _c_strides(array.shape), 0


def _view(flat, shape, strides, storage_offset):
    reach = _reach(shape, strides, storage_offset)
    if reach is not None and (reach[0] < 0 or reach[1] >= flat.size):
        raise ValueError(
            f"as_strided: the view reads elements {reach[0]} to {reach[1]} of the "
            f"{flat.size} in the input's memory"
        )
    xp = get_array_module(flat)
    itemsize = flat.dtype.itemsize
    return xp.lib.stride_tricks.as_strided(
        flat[storage_offset:], shape=shape, strides=tuple([s * itemsize for s in strides])
    )


def _stride_array(array, shape, strides, storage_offset):
    """A view of the memory ``array`` lies in, through a shape, strides and offset in elements.

    (Chainer's helper name, which its tests read.) ``array``'s own shape,
    strides and offset are ignored: ``storage_offset`` counts from the start
    of its allocation (see :func:`as_strided`).

    Raises:
        ValueError: a position the view reads lies outside that memory.
    """
    flat = _memory(array)[0]
    return _view(flat, shape, strides, storage_offset)


def _positions(xp, shape, strides, offset):
    """The memory position of each element of the view ``shape``, ``strides``, ``offset``."""
    positions = xp.full(shape, offset, numpy.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        steps = xp.arange(n, dtype=numpy.int64) * s
        positions += steps.reshape((n,) + (1,) * (len(shape) - axis - 1))
    return positions


class AsStrided(FunctionNode):
    """Read the memory ``x`` lies in through a shape, strides and offset in elements."""

    def __init__(self, shape, strides, storage_offset):
        self.shape = shape
        self.strides = strides
        self.storage_offset = storage_offset

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))

    def forward(self, inputs):
        x = inputs[0]
        flat, x_strides, x_offset = _memory(x)
        self._x_geometry = (x.shape, x_strides, x_offset)
        if self.storage_offset is None:
            self.storage_offset = x_offset
        if 0 in self.shape:
            return (get_array_module(x).empty(self.shape, x.dtype),)
        return (_view(flat, self.shape, self.strides, self.storage_offset).copy(),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        xp = gy.xp
        x_positions = _positions(xp, *self._x_geometry)
        y_positions = _positions(xp, self.shape, self.strides, self.storage_offset)
        size = 1 + max([int(p.max()) for p in (x_positions, y_positions) if p.size] or [-1])
        sharing = xp.bincount(x_positions.reshape(-1), minlength=size)[x_positions]
        grad = AsStridedGrad(y_positions, x_positions, size, None, 1.0 / sharing)
        return grad.apply(grad_outputs)


class AsStridedGrad(FunctionNode):
    """The gradient of :class:`AsStrided`, a linear map between two views of one memory.

    ``y = gather(scatter(a * scale_before)) * scale_after``: ``a`` (of the
    shape of ``scatter_at``) is added into a zeroed memory of ``size``
    elements at the positions ``scatter_at``, and ``y`` reads it at the
    positions ``gather_at``. For :class:`AsStrided`, ``a`` is the output
    gradient, ``gather_at`` the input's positions and ``scale_after`` one
    over the number of the input's elements sharing each position (the
    layout-agnostic gradient of PyTorch's ``as_strided``: the gradient of a
    memory position is shared among the input elements that alias it). Its
    own gradient is the transposed map, this node with the roles swapped.
    """

    def __init__(self, scatter_at, gather_at, size, scale_before, scale_after):
        self.scatter_at = scatter_at
        self.gather_at = gather_at
        self.size = size
        self.scale_before = scale_before
        self.scale_after = scale_after

    def forward(self, inputs):
        a = inputs[0]
        if a.dtype.kind != "f":
            raise TypeError(
                f"as_strided: the gradient is defined for floating dtypes only, got {a.dtype}"
            )
        xp = get_array_module(a)
        if self.scale_before is not None:
            a = a * self.scale_before.astype(a.dtype, copy=False)
        memory = xp.zeros(self.size, a.dtype)
        xp.add.at(memory, self.scatter_at.reshape(-1), a.reshape(-1))
        y = memory[self.gather_at]
        if self.scale_after is not None:
            y = y * self.scale_after.astype(a.dtype, copy=False)
        return (force_array(y, a.dtype),)

    def backward(self, indexes, grad_outputs):
        transposed = AsStridedGrad(
            self.gather_at, self.scatter_at, self.size, self.scale_after, self.scale_before
        )
        return transposed.apply(grad_outputs)


def as_strided(x, shape, strides, storage_offset=None):
    """Read the memory ``x`` lies in through a new shape, strides and offset.

    ``y[i_1, ..., i_n] = memory[storage_offset + i_1 * strides[0] + ... +
    i_n * strides[n - 1]]``, where ``memory`` is the allocation ``x`` is a
    view of (the array owning a NumPy view's data, a CuPy array's memory
    block), read as elements of ``x``'s dtype: ``x``'s own shape and strides
    are ignored, as in Chainer and PyTorch. Strides and offset count
    elements, not bytes (unlike :func:`numpy.lib.stride_tricks.as_strided`);
    windows may overlap, and strides may be zero or negative. When ``x``
    cannot be read that way (a view of another itemsize, or of an array
    that is not contiguous), ``memory`` is ``x``'s elements in C order.

    The gradient is layout-agnostic: the output gradients are added into
    the memory positions they read, and each element of ``x`` gets its
    position's sum divided by the number of ``x``'s elements sharing that
    position (1 unless ``x`` overlaps itself, a broadcast for instance).
    Positions ``x`` does not cover get no gradient. It is defined for
    floating dtypes only.

    Args:
        x (Variable or array): the array whose memory is read.
        shape (tuple of int): the output's shape.
        strides (tuple of int): one stride per output axis, in elements.
        storage_offset (int or None): the position in ``memory`` of
            ``y[0, ..., 0]``; None means ``x``'s own first element.

    Returns:
        Variable: of ``shape`` and ``x``'s dtype, a new array (not a view).

    Raises:
        ValueError: ``strides`` and ``shape`` differ in length, a dimension
            or the offset is negative, or the view reads outside ``memory``.
        TypeError: at backward, when the gradient is not of a floating dtype.

    >>> import numpy as np
    >>> as_strided(np.arange(4, dtype=np.float32), (3, 2), (1, 1), 0).array
    array([[0., 1.],
           [1., 2.],
           [2., 3.]], dtype=float32)
    """
    shape = _as_ints(shape, "shape")
    strides = _as_ints(strides, "strides")
    if storage_offset is not None:
        storage_offset = _as_ints((storage_offset,), "storage_offset")[0]
    if len(shape) != len(strides):
        raise ValueError(
            f"as_strided: expected one stride per axis of shape {shape}, got strides {strides}"
        )
    if any(n < 0 for n in shape):
        raise ValueError(f"as_strided: expected non-negative dimensions, got shape {shape}")
    if storage_offset is not None and storage_offset < 0:
        raise ValueError(f"as_strided: expected storage_offset >= 0, got {storage_offset}")
    return AsStrided(shape, strides, storage_offset).apply((x,))[0]
