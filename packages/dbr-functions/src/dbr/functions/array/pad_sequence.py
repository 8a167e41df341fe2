"""pad_sequence: arrays of different lengths padded into one batch."""

import numbers

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module
from dbr.functions.array._args import fill_none_grads


class PadSequence(FunctionNode):
    """``y[i, :len(xs[i])] = xs[i]`` and ``y[i, len(xs[i]):] = padding``."""

    def __init__(self, length=None, padding=0):
        self.length = length
        self.padding = padding

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() > 0)
        type_check.argname(in_types, [f"xs[{i}]" for i in range(len(in_types))])
        x0 = in_types[0]
        type_check.expect(x0.ndim > 0)
        unit = type_check.eval(x0.shape)[1:]
        dtype0 = type_check.eval(x0.dtype)
        length = self.length
        for x in in_types:
            shape = type_check.eval(x.shape)
            if (
                type_check.eval(x.dtype) == dtype0
                and len(shape) == len(unit) + 1
                and shape[1:] == unit
                and (length is None or shape[0] <= length)
            ):
                continue
            # Only a failing input builds the conditions that name it in the message.
            type_check.expect(x.dtype == x0.dtype, x.ndim == x0.ndim)
            type_check.expect(x.shape[1:] == x0.shape[1:])
            type_check.expect(x.shape[0] <= length)

    def forward(self, xs):
        lengths = [len(x) for x in xs]
        length = max(lengths) if self.length is None else self.length
        self._lengths = lengths
        x0 = xs[0]
        xp = get_array_module(x0)
        y = xp.empty((len(xs), length) + x0.shape[1:], x0.dtype)
        for i, (x, n) in enumerate(zip(xs, lengths)):
            y[i, :n] = x
            if n < length:
                y[i, n:] = self.padding
        return (y,)

    def backward(self, indexes, grad_outputs):
        gxs = PadSequenceGrad(self._lengths).apply(grad_outputs)
        return tuple([gxs[i] for i in indexes])


class PadSequenceGrad(FunctionNode):
    """The gradient of :class:`PadSequence`: ``gy[i, :lengths[i]]`` for each ``i`` (views)."""

    def __init__(self, lengths):
        self.lengths = lengths

    def forward(self, inputs):
        gy = inputs[0]
        self._shape = gy.shape
        return tuple([gy[i, :n] for i, n in enumerate(self.lengths)])

    def backward(self, indexes, grad_outputs):
        unit = self._shape[2:]
        shapes = [(n,) + unit for n in self.lengths]
        dtype = next(g.dtype for g in grad_outputs if g is not None)
        ggs = fill_none_grads(grad_outputs, shapes, dtype)
        return PadSequence(self._shape[1], 0).apply(ggs)


def pad_sequence(xs, length=None, padding=0):
    """Pad arrays of different lengths to one length and stack them.

    ``y[i, :len(xs[i])] = xs[i]`` and the rest of ``y[i]`` is ``padding``.

    Args:
        xs (list or tuple of Variable or array): the sequences (at least one),
            ``(L_i, ...)``-shaped, of one dtype and trailing shape.
        length (None or int): the length of the output's second axis, at least
            every ``L_i``; None takes the longest ``L_i``.
        padding (int or float): the value filling the padded positions.

    Returns:
        Variable: of shape ``(len(xs), length) + xs[0].shape[1:]``.

    Raises:
        TypeError: ``length`` is not None or an int, or ``padding`` not a number.
        ValueError: ``length`` is negative.
        InvalidType: ``xs`` is empty, an input is 0-d or longer than
            ``length``, or the inputs differ in dtype or trailing shape.

    >>> import numpy as np
    >>> xs = [np.array([1, 2, 3], np.float32), np.array([4], np.float32)]
    >>> pad_sequence(xs, padding=-1).array
    array([[ 1.,  2.,  3.],
           [ 4., -1., -1.]], dtype=float32)
    """
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, numbers.Integral):
            raise TypeError(f"pad_sequence: expected length to be None or an int, got {length!r}")
        if length < 0:
            raise ValueError(f"pad_sequence: expected length >= 0, got {length}")
        length = int(length)
    if isinstance(padding, bool) or not isinstance(padding, numbers.Number):
        raise TypeError(f"pad_sequence: expected padding to be a number, got {padding!r}")
    return PadSequence(length, padding).apply(xs)[0]
