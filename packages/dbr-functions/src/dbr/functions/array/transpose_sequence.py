"""transpose_sequence: a list of sequences as a list of time steps, and back."""

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import fill_none_grads


class TransposeSequence(FunctionNode):
    """``ys[t] = stack([x[t] for x in xs if len(x) > t])`` for ``t < n_out``.

    The inputs are sorted by non-increasing length. ``n_out`` defaults to the
    longest length; the gradient is the same transposition of the output
    gradients, back to ``len(xs)`` sequences.
    """

    def __init__(self, n_out=None):
        self.n_out = n_out

    def check_type_forward(self, in_types):
        type_check.argname(in_types, [f"xs[{i}]" for i in range(len(in_types))])
        prev_shape = prev_dtype = None
        for i, x in enumerate(in_types):
            shape = type_check.eval(x.shape)
            dtype = type_check.eval(x.dtype)
            if shape and (
                prev_shape is None
                or (
                    prev_shape[0] >= shape[0]
                    and prev_shape[1:] == shape[1:]
                    and prev_dtype == dtype
                )
            ):
                prev_shape, prev_dtype = shape, dtype
                continue
            # Only a failing input builds the conditions that name it in the message.
            type_check.expect(x.ndim >= 1)
            prev = in_types[i - 1]
            type_check.expect(
                prev.shape[0] >= x.shape[0],
                x.shape[1:] == prev.shape[1:],
                x.dtype == prev.dtype,
            )

    def forward(self, xs):
        x0 = xs[0]
        longest = len(x0)
        n_out = longest if self.n_out is None else self.n_out
        unit = x0.shape[1:]
        xp = get_array_module(x0)
        buffer = xp.empty((longest, len(xs)) + unit, x0.dtype)
        lengths = []
        for i, x in enumerate(xs):
            n = len(x)
            buffer[:n, i] = x
            lengths.append(n)
        counts = []
        k = len(xs)
        for t in range(longest):
            while lengths[k - 1] <= t:
                k -= 1
            counts.append(k)
        ys = [buffer[t, :k] for t, k in enumerate(counts)]
        ys += [xp.empty((0,) + unit, x0.dtype) for _ in range(longest, n_out)]
        self._shapes = [y.shape for y in ys]
        return tuple(ys)

    def backward(self, indexes, grad_outputs):
        dtype = next(g.dtype for g in grad_outputs if g is not None)
        gys = fill_none_grads(grad_outputs, self._shapes, dtype)
        gxs = TransposeSequence(len(self.inputs)).apply(gys)
        return tuple([gxs[i] for i in indexes])


def transpose_sequence(xs):
    """Transpose a list of sequences into a list of time steps.

    For sequences ``xs`` sorted by non-increasing length, ``ys[t]`` stacks
    the ``t``-th elements of the sequences long enough to have one:
    ``ys[t] = stack([x[t] for x in xs if len(x) > t])``. Applied to ``ys`` it
    gives ``xs`` back, which is also how gradients flow.

    Args:
        xs (list or tuple of Variable or array): sequences ``(L_i, ...)`` of
            one dtype and trailing shape, with ``L_0 >= L_1 >= ...``.

    Returns:
        tuple of Variable: ``L_0`` arrays; ``ys[t]`` has shape
        ``(k_t,) + xs[0].shape[1:]``, ``k_t`` the number of sequences longer
        than ``t``. Empty if ``xs`` is.

    Raises:
        InvalidType: an input is 0-d, the inputs are not sorted by length, or
            they differ in dtype or trailing shape.

    >>> import numpy as np
    >>> xs = [np.array([1, 2, 3], np.float32), np.array([4, 5], np.float32)]
    >>> [y.array.tolist() for y in transpose_sequence(xs)]
    [[1.0, 4.0], [2.0, 5.0], [3.0]]
    """
    if len(xs) == 0:
        return ()
    return TransposeSequence().apply(xs)
