"""get_item: basic and advanced indexing, with a scatter-add gradient."""

import numpy

from dbr.core import backend, type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import force_array
from dbr.core.variable import Variable


def _is_integer_scalar(s):
    return isinstance(s, (int, numpy.integer))


def _normalize_slices(slices):
    """Return ``slices`` as a tuple with one entry per index position.

    A list of integer scalars (or an empty list) is one integer array index, as in
    NumPy; any other list (one holding slices, None, Ellipsis, arrays or lists) holds
    one index per axis, like a tuple, as Chainer's ``get_item`` takes it.
    """
    if isinstance(slices, list) and not all(map(_is_integer_scalar, slices)):
        slices = tuple(slices)
    elif not isinstance(slices, tuple):
        slices = (slices,)
    out = []
    for s in slices:
        if isinstance(s, Variable):
            s = s._data
        elif isinstance(s, list):
            s = numpy.asarray(s)
            if s.size == 0:
                # An empty list is an (empty) integer index, as NumPy takes it.
                s = s.astype(numpy.intp)
        out.append(s)
    return tuple(out)


def _is_basic(slices):
    return all(
        s is None or s is Ellipsis or isinstance(s, (int, numpy.integer, slice)) for s in slices
    )


def _axes_used(s):
    """How many axes of the indexed array the index entry ``s`` consumes."""
    if s is None or s is Ellipsis or isinstance(s, (bool, numpy.bool_)):
        return 0
    if getattr(getattr(s, "dtype", None), "kind", None) == "b":
        return s.ndim
    return 1


def _check_integer_indexes(slices, shape):
    """Raise a clear IndexError for an integer entry outside its axis of ``shape``."""
    axis = 0
    for s in slices:
        if s is Ellipsis:
            axis += len(shape) - sum(map(_axes_used, slices))
            continue
        if (
            isinstance(s, (int, numpy.integer))
            and not isinstance(s, (bool, numpy.bool_))
            and axis < len(shape)
            and not -shape[axis] <= s < shape[axis]
        ):
            raise IndexError(
                f"get_item: index {s} is out of bounds for axis {axis} of size "
                f"{shape[axis]} (x.shape == {shape})"
            )
        axis += _axes_used(s)


class GetItem(FunctionNode):
    """``x[slices]`` for basic (int, slice, None, Ellipsis) and advanced (array) indexes."""

    def __init__(self, slices):
        self.slices = _normalize_slices(slices)
        if sum(s is Ellipsis for s in self.slices) > 1:
            raise ValueError("get_item: only one Ellipsis is allowed in the index")

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        ndim = type_check.eval(in_types[0].ndim)
        used = 0
        for s in self.slices:
            if s is None or s is Ellipsis:
                continue
            is_mask = getattr(getattr(s, "dtype", None), "kind", None) == "b"
            used += s.ndim if is_mask else 1
        if used > ndim:
            raise type_check.InvalidType(
                f"an index of at most x.ndim axes ({ndim})", f"{used} indexed axes"
            )

    def forward(self, inputs):
        x = inputs[0]
        _check_integer_indexes(self.slices, x.shape)
        self._x_shape = x.shape
        self._x_dtype = x.dtype
        return (force_array(x[self.slices]),)

    def backward(self, indexes, grad_outputs):
        return GetItemGrad(self.slices, self._x_shape, self._x_dtype).apply(grad_outputs)


class GetItemGrad(FunctionNode):
    """The gradient of ``x[slices]``: zeros of ``x``'s shape with ``gy`` scatter-added."""

    def __init__(self, slices, in_shape, in_dtype):
        self.slices = slices
        self._in_shape = in_shape
        self._in_dtype = in_dtype

    def forward(self, inputs):
        gy = inputs[0]
        xp = backend.get_array_module(gy)
        gx = xp.zeros(self._in_shape, gy.dtype)
        if _is_basic(self.slices):
            gx[self.slices] = gy
        else:
            xp.add.at(gx, self.slices, gy)
        return (gx,)

    def backward(self, indexes, grad_outputs):
        return (get_item(grad_outputs[0], self.slices),)


def get_item(x, slices):
    """Return ``x[slices]``; the gradient is scattered back (added where indexes repeat).

    Args:
        x (Variable or array): input.
        slices: an int, slice, None, Ellipsis, integer or boolean array (or list),
            or a tuple of these, as in NumPy indexing. A list of integers is one
            integer array index; a list holding anything else (slices, None,
            Ellipsis, arrays, lists) is taken like a tuple, one entry per axis.

    Returns:
        Variable: the selected elements.

    Raises:
        IndexError: If an integer index lies outside its axis; the message names the
            axis, its size and the index.

    >>> import numpy as np
    >>> get_item(np.arange(6, dtype=np.float32).reshape(2, 3), (1, slice(None, 2))).array
    array([3., 4.], dtype=float32)
    """
    return GetItem(slices).apply((x,))[0]
