"""moveaxis: move axes of an array to new positions."""

from dbr.core import FunctionNode, ops, type_check
from dbr.functions.array._args import check_axis, check_int_tuple, inverse_permutation


class Moveaxis(FunctionNode):
    """``x`` viewed with the axes ``source`` moved to ``destination``, the others in order."""

    def __init__(self, source, destination):
        self.source = source
        self.destination = destination

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        ndim = type_check.eval(x.ndim)
        for name, axes in (("source", self.source), ("destination", self.destination)):
            for a in axes:
                check_axis(x, a)
            if len({a % ndim for a in axes}) != len(axes):
                raise ValueError(
                    f"moveaxis: duplicate value in {name} {axes} for an x of {ndim} axes"
                )

    def forward(self, inputs):
        x = inputs[0]
        ndim = x.ndim
        source = [a % ndim for a in self.source]
        destination = [a % ndim for a in self.destination]
        perm = [a for a in range(ndim) if a not in source]
        for dst, src in sorted(zip(destination, source)):
            perm.insert(dst, src)
        self._perm = tuple(perm)
        return (x.transpose(perm),)

    def backward(self, indexes, grad_outputs):
        return (ops.transpose(grad_outputs[0], inverse_permutation(self._perm)),)


def moveaxis(x, source, destination):
    """Move axes of an array to new positions, as ``numpy.moveaxis``.

    The other axes keep their relative order.

    Args:
        x (Variable or array): input.
        source (int or tuple of ints): the original positions of the axes to
            move, distinct (negative counts from the last).
        destination (int or tuple of ints): their new positions, distinct, as
            many as ``source``.

    Returns:
        Variable: a view of ``x`` with its axes permuted.

    Raises:
        TypeError: ``source`` or ``destination`` is not an int or a tuple of ints.
        ValueError: ``source`` and ``destination`` differ in length, or an
            axis is repeated in either.
        InvalidType: an axis is out of range.

    >>> import numpy as np
    >>> moveaxis(np.zeros((2, 3, 4), np.float32), 0, -1).shape
    (3, 4, 2)
    """
    source = check_int_tuple(source, "source", "moveaxis")
    destination = check_int_tuple(destination, "destination", "moveaxis")
    if len(source) != len(destination):
        raise ValueError(
            f"moveaxis: expected source and destination to have the same number of "
            f"elements, got {len(source)} and {len(destination)}"
        )
    return Moveaxis(source, destination).apply((x,))[0]
