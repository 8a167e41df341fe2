"""split_axis: split an array into several along an axis."""

import numbers

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array import concat as _concat
from dbr.functions.array._args import check_axis, check_int, fill_none_grads


class SplitAxis(FunctionNode):
    """Split ``x`` along ``axis`` into equal sections, or at sorted indices.

    ``indices_or_sections`` is an int (the number of equal sections) or a
    list of non-decreasing ints in ``[0, x.shape[axis]]``. The outputs are
    views of ``x``; the gradient concatenates the output gradients.
    """

    def __init__(self, indices_or_sections, axis):
        self.indices_or_sections = indices_or_sections
        self.axis = axis

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        check_axis(x, self.axis)
        spec = self.indices_or_sections
        if isinstance(spec, int):
            type_check.expect(x.shape[self.axis] % spec == 0)
        elif spec:
            type_check.expect(x.shape[self.axis] >= spec[-1])

    def forward(self, inputs):
        x = inputs[0]
        xp = get_array_module(x)
        ys = tuple(xp.split(x, self.indices_or_sections, self.axis))
        self._shapes = [y.shape for y in ys]
        return ys

    def backward(self, indexes, grad_outputs):
        if len(grad_outputs) == 1:
            return grad_outputs
        dtype = next(g.dtype for g in grad_outputs if g is not None)
        gys = fill_none_grads(grad_outputs, self._shapes, dtype)
        return _concat.Concat(self.axis).apply(gys)


def _normalize_spec(indices_or_sections):
    spec = indices_or_sections
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        if spec <= 0:
            raise ValueError(
                f"split_axis: expected indices_or_sections to be a positive number "
                f"of sections, got {spec}"
            )
        return int(spec)
    if hasattr(spec, "__len__") and not isinstance(spec, (str, bytes)):
        array = numpy.asarray(backend.to_cpu(spec) if hasattr(spec, "device") else spec)
        if array.ndim == 1 and (array.dtype.kind in "iu" or array.size == 0):
            indices = [int(i) for i in array]
            if any(i < 0 for i in indices):
                raise ValueError(
                    f"split_axis: expected the indices in indices_or_sections to be "
                    f"non-negative, got {indices}"
                )
            if any(a > b for a, b in zip(indices[:-1], indices[1:])):
                raise ValueError(
                    f"split_axis: expected the indices in indices_or_sections to be "
                    f"sorted, got {indices}"
                )
            return indices
    raise TypeError(
        f"split_axis: expected indices_or_sections to be an int or a 1-D sequence "
        f"of ints, got {indices_or_sections!r}"
    )


def split_axis(x, indices_or_sections, axis, force_tuple=True):
    """Split an array into several along an axis.

    With an int ``N``, ``x`` is split into ``N`` equal parts along ``axis``
    (its length there must be a multiple of ``N``); with sorted indices
    ``[i_1, ..., i_k]``, into the ``k + 1`` parts ``x[:i_1], x[i_1:i_2], ...,
    x[i_k:]`` along ``axis`` (parts may be empty). The gradient of ``x`` is
    the concatenation of the outputs' gradients (zeros for unused outputs).

    Args:
        x (Variable or array): the array to split.
        indices_or_sections (int or 1-D sequence of ints): the number of equal
            sections, or the sorted positions to split at (each in
            ``[0, x.shape[axis]]``).
        axis (int): the axis to split along (negative counts from the last).
        force_tuple (bool): return a tuple even when there is one output;
            when False, a single output is returned as a Variable.

    Returns:
        tuple of Variable, or Variable: the parts, views of ``x``.

    Raises:
        TypeError: ``indices_or_sections`` or ``axis`` has the wrong type.
        ValueError: the number of sections is not positive, or the indices are
            negative or unsorted.
        InvalidType: ``axis`` is not an axis of ``x``, its length is not a
            multiple of the number of sections, or an index exceeds it.

    >>> import numpy as np
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> [y.shape for y in split_axis(x, [1], axis=1)]
    [(2, 1), (2, 2)]
    """
    spec = _normalize_spec(indices_or_sections)
    axis = check_int(axis, "axis", "split_axis")
    ys = SplitAxis(spec, axis).apply((x,))
    if force_tuple or len(ys) != 1:
        return ys
    return ys[0]
