"""tensordot: sums of products over pairs of axes of two arrays."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.core.utils import accumulation_dtype


def _parse_axes(axes):
    """Return ``axes`` as an int or a pair of tuples of ints, or raise naming tensordot."""
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: expected axes to be non-negative, got {axes}")
        return axes
    if isinstance(axes, (list, tuple)) and len(axes) == 2:
        pair = []
        for side in axes:
            side = (side,) if isinstance(side, int) else side
            if not isinstance(side, (list, tuple)) or not all(isinstance(a, int) for a in side):
                break
            pair.append(tuple(side))
        else:
            if len(pair[0]) != len(pair[1]):
                raise ValueError(
                    f"tensordot: expected as many axes of a as of b, got {pair[0]} and {pair[1]}"
                )
            return tuple(pair)
    if isinstance(axes, (list, tuple)) and len(axes) != 2:
        raise ValueError(f"tensordot: expected axes to be a pair of sequences, got {axes!r}")
    raise TypeError(
        f"tensordot: expected axes to be an int or a pair of sequences of ints, got {axes!r}"
    )


class TensorDot(FunctionNode):
    """Sum of ``a * b`` over the axes ``a_axes`` of ``a`` paired with ``b_axes`` of ``b``.

    The result has ``a``'s other axes, then ``b``'s other axes, each in order,
    and ``dtype`` (None: NumPy's promotion of the operands' dtypes).
    """

    def __init__(self, axes=2, dtype=None):
        self.axes = _parse_axes(axes)
        self.dtype = None if dtype is None else numpy.dtype(dtype)

    def _pairs(self, a_ndim, b_ndim):
        axes = self.axes
        if isinstance(axes, int):
            return tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes))
        return (
            tuple([a % a_ndim if a_ndim else a for a in axes[0]]),
            tuple([b % b_ndim if b_ndim else b for b in axes[1]]),
        )

    def check_type_forward(self, in_types):
        # Axes that do not fit the operands are ValueErrors, as in Chainer (and NumPy).
        type_check.argname(in_types, ("a", "b"))
        a_type, b_type = in_types
        type_check.expect(a_type.dtype.kind == "f", b_type.dtype.kind == "f")
        a_shape = type_check.eval(a_type.shape)
        b_shape = type_check.eval(b_type.shape)
        axes = self.axes
        if isinstance(axes, int):
            if axes > len(a_shape) or axes > len(b_shape):
                raise ValueError(
                    f"tensordot: expected a.ndim >= {axes} and b.ndim >= {axes} (axes={axes}), "
                    f"got a.ndim == {len(a_shape)}, b.ndim == {len(b_shape)}"
                )
        else:
            for name, side, shape in (("a", axes[0], a_shape), ("b", axes[1], b_shape)):
                ndim = len(shape)
                if any(not -ndim <= v < ndim for v in side) or len(
                    {v % ndim for v in side}
                ) != len(side):
                    raise ValueError(
                        f"tensordot: expected distinct axes of {name} in "
                        f"[-{name}.ndim, {name}.ndim), got axes {side}, {name}.ndim == {ndim}"
                    )
        a_axes, b_axes = self._pairs(len(a_shape), len(b_shape))
        for i, j in zip(a_axes, b_axes):
            if a_shape[i] != b_shape[j]:
                raise ValueError(
                    f"tensordot: expected a.shape[{i}] == b.shape[{j}] (summed axes), "
                    f"got a.shape == {a_shape}, b.shape == {b_shape}"
                )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b = inputs
        a_axes, b_axes = self._pairs(a.ndim, b.ndim)
        xp = get_array_module(a)
        dtype = self.dtype or numpy.result_type(a.dtype, b.dtype)
        # BLAS has no half-precision product: float16 meets float32 (or the other operand's
        # wider dtype), and the sums keep that precision before one rounding to ``dtype``.
        common = accumulation_dtype(a.dtype, b.dtype)
        y = xp.tensordot(
            a.astype(common, copy=False), b.astype(common, copy=False), (a_axes, b_axes)
        )
        return (xp.asarray(y).astype(dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        gy = grad_outputs[0]
        a_axes, b_axes = self._pairs(a.ndim, b.ndim)
        a_free = [i for i in range(a.ndim) if i not in a_axes]
        b_free = [j for j in range(b.ndim) if j not in b_axes]
        n_a = len(a_free)
        ret = []
        for i in indexes:
            if i == 0:
                # Contract gy's b-part with b's free axes: the result has a's free axes,
                # then b's summed axes in b's order, which pair with a's summed axes.
                node = TensorDot((tuple(range(n_a, gy.ndim)), tuple(b_free)), a.dtype)
                g = node.apply((gy, b))[0]
                b_rest = sorted(b_axes)
                order = a_free + [a_axes[b_axes.index(j)] for j in b_rest]
                ret.append(_permute_to(g, order))
            else:
                g = TensorDot((tuple(a_free), tuple(range(n_a))), b.dtype).apply((a, gy))[0]
                a_rest = sorted(a_axes)
                order = [b_axes[a_axes.index(k)] for k in a_rest] + b_free
                ret.append(_permute_to(g, order))
        return tuple(ret)


def _permute_to(g, order):
    """Transpose ``g``, whose axis ``k`` is target axis ``order[k]``, into target order."""
    perm = tuple(numpy.argsort(order).tolist())
    return g if perm == tuple(range(len(perm))) else ops.transpose(g, perm)


def tensordot(a, b, axes=2):
    """Tensor dot product: sums of products of ``a`` and ``b`` over paired axes.

    As :func:`numpy.tensordot`: the result has the axes of ``a`` that are not
    summed, then those of ``b``.

    Args:
        a (Variable or array): first operand, of a floating dtype.
        b (Variable or array): second operand, of a floating dtype (not
            necessarily ``a``'s).
        axes (int or pair of sequences of int): an int ``n`` sums the last
            ``n`` axes of ``a`` with the first ``n`` of ``b``; a pair
            ``(a_axes, b_axes)`` sums ``a_axes[k]`` with ``b_axes[k]``
            (single ints are allowed for one axis each).

    Returns:
        Variable: the tensor dot product, of the dtype NumPy's promotion
        gives ``a`` and ``b``; each gradient has its input's dtype.

    >>> import numpy as np
    >>> a = np.ones((5, 3, 2), np.float32)
    >>> b = np.ones((3, 2, 4), np.float32)
    >>> tensordot(a, b, axes=2).shape
    (5, 4)
    >>> tensordot(a, b, axes=([1], [0])).shape
    (5, 2, 2, 4)
    """
    return TensorDot(axes).apply((a, b))[0]
