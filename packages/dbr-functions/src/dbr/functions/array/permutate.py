"""permutate: reorder an array along an axis by a permutation."""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import check_axis, check_int


class Permutate(FunctionNode):
    """``y = x.take(indices, axis)`` for a permutation ``indices`` (its inverse if ``inv``)."""

    def __init__(self, axis=0, inv=False):
        self.axis = axis
        self.inv = inv

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "indices"))
        x, indices = in_types
        check_axis(x, self.axis)
        type_check.expect(
            indices.dtype.kind == "i",
            indices.ndim == 1,
            x.shape[self.axis] == indices.shape[0],
        )

    def forward(self, inputs):
        self.retain_inputs((1,))
        x, indices = inputs
        xp = get_array_module(x, indices)
        n = len(indices)
        if n and not bool((xp.sort(indices) == xp.arange(n)).all()):
            shown = numpy.array2string(backend.to_cpu(indices), threshold=8, separator=", ")
            raise ValueError(
                f"permutate: expected indices to be a permutation of range({n}), got {shown}"
            )
        if self.inv:
            inverse = xp.empty_like(indices)
            inverse[indices] = xp.arange(n, dtype=indices.dtype)
            indices = inverse
        return (xp.take(x, indices, axis=self.axis),)

    def backward(self, indexes, grad_outputs):
        indices = self.get_retained_inputs()[0]
        gx = Permutate(self.axis, not self.inv).apply((grad_outputs[0], indices))[0]
        return tuple([gx if i == 0 else None for i in indexes])


def permutate(x, indices, axis=0, inv=False):
    """Permute an array along an axis.

    ``y[..., i, ...] = x[..., indices[i], ...]`` along ``axis``; with
    ``inv``, ``indices`` is taken as the inverse permutation:
    ``y[..., indices[i], ...] = x[..., i, ...]``.

    Args:
        x (Variable or array): input, ``(s_1, ..., s_N)``-shaped.
        indices (Variable or array): a 1-D signed-integer array holding a
            permutation of ``range(x.shape[axis])``.
        axis (int): the axis to permute (negative counts from the last).
        inv (bool): use the inverse of ``indices``.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``axis`` is not an int.
        ValueError: ``indices`` is not a permutation.
        InvalidType: ``axis`` is not an axis of ``x``, or ``indices`` is not a
            1-D signed-integer array of length ``x.shape[axis]``.

    >>> import numpy as np
    >>> x = np.arange(6, dtype=np.float32).reshape(3, 2)
    >>> permutate(x, np.array([2, 0, 1], np.int32)).array
    array([[4., 5.],
           [0., 1.],
           [2., 3.]], dtype=float32)
    """
    axis = check_int(axis, "axis", "permutate")
    return Permutate(axis, bool(inv)).apply((x, indices))[0]
