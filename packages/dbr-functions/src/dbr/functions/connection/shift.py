"""shift: moves groups of channels by different offsets (a zero-FLOP spatial convolution)."""

import numpy

from dbr.core import FunctionNode, backend, type_check


def _pair(value, name):
    """``value`` (an int or a pair of ints) as a pair of Python ints."""
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2 or not all(
        isinstance(v, (int, numpy.integer)) and not isinstance(v, bool) for v in pair
    ):
        raise TypeError(f"shift: expected {name} to be an int or a pair of ints, got {value!r}")
    return int(pair[0]), int(pair[1])


def _range_pair(length, offset):
    """Destination and source slices of ``y[i] = x[i - offset]`` along an axis of ``length``."""
    start = min(max(offset, 0), length)
    stop = max(min(length + offset, length), start)
    return slice(start, stop), slice(start - offset, stop - offset)


class Shift(FunctionNode):
    """Channel group ``g`` of ``x`` moved by ``(ky_g * dy, kx_g * dx)``; see :func:`shift`."""

    def __init__(self, ksize=3, dilate=1):
        self.kh, self.kw = ksize
        self.dy, self.dx = dilate

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 4,
            x_type.shape[1] >= self.kh * self.kw,
        )

    def _offsets(self, channels):
        """``(first channel, end channel, dy, dx)`` for each group of channels."""
        kh, kw = self.kh, self.kw
        n_groups = kh * kw
        size = channels // n_groups
        center = n_groups // 2
        groups = []
        for i in range(n_groups):
            # The zero shift goes to the last group, which also takes the
            # channels left over by the division; the group it displaces
            # takes the last offset.
            g = n_groups - 1 if i == center else center if i == n_groups - 1 else i
            end = channels if i == n_groups - 1 else (i + 1) * size
            oy = (g // kw - kh // 2) * self.dy
            ox = (g % kw - kw // 2) * self.dx
            groups.append((i * size, end, oy, ox))
        return groups

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        _, c, h, w = x.shape
        y = xp.zeros_like(x)
        for start, end, oy, ox in self._offsets(c):
            dst_h, src_h = _range_pair(h, oy)
            dst_w, src_w = _range_pair(w, ox)
            y[:, start:end, dst_h, dst_w] = x[:, start:end, src_h, src_w]
        return (y,)

    def backward(self, indexes, grad_outputs):
        inverse = Shift((self.kh, self.kw), (-self.dy, -self.dx))
        return inverse.apply(grad_outputs)


def shift(x, ksize=3, dilate=1):
    """Shift function: a zero-FLOP, zero-parameter alternative to spatial convolution.

    The channels of ``x`` are split into :math:`k_H k_W` groups of
    :math:`\\lfloor c / (k_H k_W) \\rfloor` channels (the last group also
    takes the remainder). Group :math:`g` gets the offset
    :math:`(u_g, v_g) = (\\lfloor g / k_W \\rfloor - \\lfloor k_H / 2 \\rfloor,\\;
    g \\bmod k_W - \\lfloor k_W / 2 \\rfloor)` of a :math:`k_H \\times k_W`
    window, except that the centre offset :math:`(0, 0)` and the last one
    swap groups, so that the last group is never moved; then

    .. math:: y_{n, c, i, j} = x_{n, c, i - u_g d_Y, j - v_g d_X}

    with zeros where the source lies outside the image. The gradient is the
    shift of the output gradient by the opposite offsets. See Wu et al.,
    `Shift: A Zero FLOP, Zero Parameter Alternative to Spatial Convolutions
    <https://arxiv.org/abs/1711.08141>`_.

    Args:
        x (Variable or array): input of shape :math:`(n, c, h, w)` with
            :math:`c \\ge k_H k_W`; float16, float32 or float64.
        ksize (int or pair of ints): the window :math:`(k_H, k_W)`; both odd
            and positive. ``ksize=k`` is ``ksize=(k, k)``.
        dilate (int or pair of ints): the factors :math:`(d_Y, d_X)` that
            scale the offsets; nonzero (a negative factor shifts the other
            way). ``dilate=d`` is ``dilate=(d, d)``.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        ValueError: a window size is not odd and positive, or a dilation is 0.
        TypeError: ``ksize`` or ``dilate`` is not an int or a pair of ints.
        InvalidType: ``x`` is not a floating 4-d array with enough channels.

    >>> import numpy as np
    >>> x = np.arange(9.0, dtype=np.float32).reshape(1, 3, 1, 3)
    >>> x[0, :, 0]
    array([[0., 1., 2.],
           [3., 4., 5.],
           [6., 7., 8.]], dtype=float32)
    >>> shift(x, ksize=(1, 3)).array[0, :, 0]
    array([[1., 2., 0.],
           [0., 3., 4.],
           [6., 7., 8.]], dtype=float32)
    """
    kh, kw = _pair(ksize, "ksize")
    if kh <= 0 or kw <= 0 or kh % 2 == 0 or kw % 2 == 0:
        raise ValueError(f"shift: expected ksize to be odd and positive, got {ksize!r}")
    dy, dx = _pair(dilate, "dilate")
    if dy == 0 or dx == 0:
        raise ValueError(f"shift: expected dilate to be nonzero, got {dilate!r}")
    return Shift((kh, kw), (dy, dx)).apply((x,))[0]
