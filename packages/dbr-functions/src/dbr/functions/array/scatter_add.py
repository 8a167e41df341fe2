"""scatter_add: a copy of an array with values added at indexed positions."""

import numpy

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module, to_cpu
from dbr.core.ops import get_item
from dbr.core.variable import Variable


def _list_index(values):
    """A list as NumPy indexes with it: an array, of intp when empty (not float64)."""
    index = numpy.asarray(values)
    return index.astype(numpy.intp) if index.size == 0 else index


def _normalize_slices(slices):
    if isinstance(slices, list):
        # A list of ints is one integer index, as in NumPy; any other list is a tuple of indexes.
        if all(isinstance(s, (int, numpy.integer)) for s in slices):
            slices = (_list_index(slices),)
        else:
            slices = tuple(slices)
    elif not isinstance(slices, tuple):
        slices = (slices,)
    out = []
    for s in slices:
        if isinstance(s, Variable):
            s = s.array
        elif isinstance(s, list):
            s = _list_index(s)
        out.append(s)
    if sum(s is Ellipsis for s in out) > 1:
        raise ValueError("scatter_add: expected at most one Ellipsis in slices, got several")
    return tuple(out)


def _is_basic(slices):
    return all(
        s is None or s is Ellipsis or isinstance(s, (int, numpy.integer, slice)) for s in slices
    )


def _selected_shape(shape, slices):
    """The shape of ``a[slices]`` for an ``a`` of ``shape``, found on a zero-strided dummy."""
    dummy = numpy.lib.stride_tricks.as_strided(
        numpy.zeros(1, numpy.int8), shape=shape, strides=(0,) * len(shape)
    )
    cpu_slices = tuple([s if _is_basic((s,)) else to_cpu(s) for s in slices])
    return dummy[cpu_slices].shape


class ScatterAdd(FunctionNode):
    """``y = a.copy(); y[slices] += b``, with repeated indexes each adding their value."""

    def __init__(self, slices):
        self.slices = slices
        self._basic = _is_basic(slices)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a", "b"))
        a_type, b_type = in_types
        type_check.expect(a_type.dtype == b_type.dtype)
        a_shape = type_check.eval(a_type.shape)
        try:
            _selected_shape(a_shape, self.slices)
        except IndexError as e:
            raise type_check.InvalidType(
                "slices valid for a.shape", f"a.shape == {a_shape}: {e}"
            ) from None

    def forward(self, inputs):
        a, b = inputs
        y = a.copy()
        # Checked here, not in the type check, as Chainer does: a ValueError.
        shape = y[self.slices].shape if self._basic else _selected_shape(a.shape, self.slices)
        if b.shape != shape:
            raise ValueError(
                f"scatter_add: expected b of the shape of a[slices], {shape} "
                f"(it is not broadcast), got {b.shape}"
            )
        if self._basic:
            y[self.slices] += b
        else:
            xp = get_array_module(a)
            slices = tuple([s if _is_basic((s,)) else xp.asarray(s) for s in self.slices])
            xp.add.at(y, slices, b)
        return (y,)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return tuple([gy if i == 0 else get_item(gy, self.slices) for i in indexes])


def scatter_add(a, slices, b):
    """Return a copy of ``a`` with ``b`` added to the elements ``a[slices]``.

    Unlike ``a[slices] += b``, an element indexed several times (a repeated
    integer index) receives every value aimed at it, as :func:`numpy.add.at`;
    ``a`` itself is left unchanged. The gradient of ``a`` is the output
    gradient, that of ``b`` the output gradient at ``slices``.

    Args:
        a (Variable or array): the array to add to.
        slices: an int, slice, Ellipsis, None, integer or boolean array (or
            list), or a tuple of these, as in NumPy indexing.
        b (Variable or array): the values to add; of ``a``'s dtype and of
            exactly the shape of ``a[slices]`` (it is not broadcast).

    Returns:
        Variable: of ``a``'s shape and dtype.

    >>> import numpy as np
    >>> a = np.zeros(3, np.float32)
    >>> scatter_add(a, np.array([0, 2, 0]), np.ones(3, np.float32)).array
    array([2., 0., 1.], dtype=float32)
    """
    return ScatterAdd(_normalize_slices(slices)).apply((a, b))[0]
