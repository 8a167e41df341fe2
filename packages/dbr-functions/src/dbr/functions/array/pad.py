"""pad: pad an array, as ``numpy.pad``."""

import numpy

from dbr.core import FunctionNode, as_variable, ops, type_check
from dbr.core.backend import get_array_module

# Modes whose padded values are copies of input elements, with the keywords each accepts;
# their gradient adds the gradient of every copy back onto its source element.
_GATHER_MODES = {
    "edge": (),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
    "wrap": (),
}
_MODES = ("constant", *_GATHER_MODES)


class Pad(FunctionNode):
    """``numpy.pad(x, pad_width, mode, **keywords)`` for ``pad_width`` as ``x.ndim`` pairs."""

    def __init__(self, pad_width, mode, constant_values=0):
        self.pad_width = pad_width
        self.mode = mode
        self.constant_values = constant_values

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x = in_types[0]
        type_check.expect(x.dtype.kind == "f", x.ndim == len(self.pad_width))
        if self.mode != "constant":
            for axis, (before, after) in enumerate(self.pad_width):
                if before or after:
                    type_check.expect(x.shape[axis] > 0)

    def forward(self, inputs):
        x = inputs[0]
        self._x_shape = x.shape
        xp = get_array_module(x)
        value = self.constant_values
        if self.mode == "constant" and numpy.ndim(value) == 0:
            shape = tuple([n + b + a for n, (b, a) in zip(x.shape, self.pad_width)])
            y = xp.empty(shape, x.dtype)
            if y.size != x.size:
                y.fill(value)
            y[self._center()] = x
            return (y,)
        if self.mode == "constant":
            return (xp.pad(x, self.pad_width, mode="constant", constant_values=value),)
        # A gather along each axis rather than xp.pad: cupy.pad (14.2) keeps an old copy of
        # NumPy's wrap/reflect/symmetric loop, which copies the wrong elements once a pad
        # width exceeds the axis length (e.g. wrap of 2 elements by (3, 1)).
        y = x
        for axis, (n, (before, after)) in enumerate(zip(x.shape, self.pad_width)):
            if before or after:
                source = _source_indices(n, before, after, self.mode)
                y = xp.take(y, xp.asarray(source), axis=axis)
        return (y.copy() if y is x else y,)

    def _center(self):
        return tuple([slice(b, b + n) for n, (b, _) in zip(self._x_shape, self.pad_width)])

    def backward(self, indexes, grad_outputs):
        if self.mode == "constant":
            return (ops.get_item(grad_outputs[0], self._center()),)
        return PadGrad(self.pad_width, self.mode, self._x_shape).apply(grad_outputs)


class PadGrad(FunctionNode):
    """The gradient of :class:`Pad` in a copying mode: each copy's gradient added to its source.

    It is linear in ``gy``; its own gradient pads again in the same mode.
    """

    def __init__(self, pad_width, mode, x_shape):
        self.pad_width = pad_width
        self.mode = mode
        self._x_shape = x_shape

    def forward(self, inputs):
        g = inputs[0]
        xp = get_array_module(g)
        for axis, (n, (before, after)) in enumerate(zip(self._x_shape, self.pad_width)):
            if not (before or after):
                continue
            lead = (slice(None),) * axis
            source = _source_indices(n, before, after, self.mode)
            padded = numpy.concatenate(
                [numpy.arange(before), numpy.arange(before + n, before + n + after)]
            )
            folded = g[lead + (slice(before, before + n),)].copy()
            copies = g[lead + (xp.asarray(padded),)]
            xp.add.at(folded, lead + (xp.asarray(source[padded]),), copies)
            g = folded
        return (g,)

    def backward(self, indexes, grad_outputs):
        return Pad(self.pad_width, self.mode).apply(grad_outputs)


def _source_indices(n, before, after, mode):
    """The index into an axis of length ``n`` that each of its padded positions copies.

    The padded axis is the input repeated periodically: ``wrap`` with period ``n``,
    ``symmetric`` mirrored with period ``2 n``, ``reflect`` mirrored about the end
    elements with period ``2 (n - 1)``; ``edge`` repeats the end elements. Written out
    rather than taken from ``numpy.pad``, whose wrap of a pad wider than the axis
    changed between NumPy versions (1.26 repeats a shorter cycle).
    """
    offset = numpy.arange(-before, n + after)
    if mode == "edge":
        return numpy.clip(offset, 0, n - 1)
    if mode == "wrap":
        return offset % n
    if mode == "symmetric":
        k = offset % (2 * n)
        return numpy.where(k < n, k, 2 * n - 1 - k)
    if n == 1:  # reflect of one element
        return numpy.zeros_like(offset)
    k = offset % (2 * (n - 1))
    return numpy.where(k < n, k, 2 * (n - 1) - k)


def _pairs(value, ndim, name):
    try:
        array = numpy.asarray(value)
        pairs = numpy.broadcast_to(array, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: expected {name} to be broadcastable to (x.ndim, 2) == ({ndim}, 2) "
            f"(one (before, after) pair per axis), got {value!r}"
        ) from None
    return array, pairs


def _pad_width(pad_width, ndim):
    array, pairs = _pairs(pad_width, ndim, "pad_width")
    if array.dtype.kind not in "iu" and array.size:
        raise TypeError(f"pad: expected pad_width to hold ints, got {pad_width!r}")
    if (pairs < 0).any():
        raise ValueError(f"pad: expected pad_width to be non-negative, got {pad_width!r}")
    return tuple([(int(b), int(a)) for b, a in pairs])


def pad(x, pad_width, mode, **keywords):
    """Pad an array, as ``numpy.pad``.

    The modes whose gradients are defined here are ``'constant'`` (the border
    is filled with ``constant_values``; its gradient is the central part of
    ``gy``) and the copying modes ``'edge'``, ``'reflect'``, ``'symmetric'``
    and ``'wrap'`` (the border repeats input elements; the gradient of each
    element sums the gradients of all its copies).

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64).
        pad_width (int or array-like of ints): the numbers of values padded
            before and after each axis: ``((before_1, after_1), ...,
            (before_N, after_N))``; ``(before, after)`` or ``((before,
            after),)`` for every axis alike, an int for both sides of every
            axis. Non-negative.
        mode (str): ``'constant'``, ``'edge'``, ``'reflect'``, ``'symmetric'``
            or ``'wrap'``, as in ``numpy.pad``.
        constant_values (scalar or array-like): in ``'constant'`` mode, the
            fill values, in ``pad_width``'s layout (default 0).
        reflect_type (str): in ``'reflect'`` and ``'symmetric'`` modes, only
            ``'even'`` (the default) is supported.

    Returns:
        Variable: of shape ``x.shape[i] + before_i + after_i`` along axis ``i``.

    Raises:
        TypeError: ``pad_width`` does not hold ints, or a keyword does not
            belong to ``mode``.
        ValueError: ``mode`` is not supported, ``pad_width`` or
            ``constant_values`` does not fit ``x``, a pad width is negative, or
            ``reflect_type`` is not ``'even'``.
        InvalidType: ``x`` is not of a floating dtype, or a copying mode pads
            an empty axis.

    >>> import numpy as np
    >>> pad(np.array([1.0, 2.0], np.float32), (1, 2), "constant").array
    array([0., 1., 2., 0., 0.], dtype=float32)
    >>> pad(np.array([1.0, 2.0], np.float32), 1, "edge").array
    array([1., 1., 2., 2.], dtype=float32)
    """
    if mode not in _MODES:
        raise ValueError(f"pad: expected mode to be one of {_MODES}, got {mode!r}")
    allowed = ("constant_values",) if mode == "constant" else _GATHER_MODES[mode]
    for key in keywords:
        if key not in allowed:
            raise TypeError(
                f"pad: unexpected keyword argument {key!r} for mode {mode!r} (accepted: {allowed})"
            )
    if keywords.get("reflect_type", "even") != "even":
        raise ValueError(
            f"pad: expected reflect_type to be 'even' (the only one supported), "
            f"got {keywords['reflect_type']!r}"
        )
    x = as_variable(x)
    ndim = x.ndim
    width = _pad_width(pad_width, ndim)
    value = keywords.get("constant_values", 0)
    if numpy.ndim(value) != 0:
        array, _ = _pairs(value, ndim, "constant_values")
        value = array.tolist()
    return Pad(width, mode, value).apply((x,))[0]
