"""cumsum: cumulative sums along an axis."""

import numpy

from dbr.core import ops
from dbr.core.backend import get_array_module
from dbr.functions._docs import fill
from dbr.functions.math._axes import Scan, flip, normalize_single_axis

# The arguments of cumsum and cumprod (see dbr.functions._docs.fill).
DOCS = {
    "args_cumulative": """\
Args:
    x (Variable or array): input of a floating dtype (float16, float32 or
        float64; float16 is accumulated in float32).
    axis (None or int): the axis to accumulate along; None accumulates
        over the flattened input (and returns a 1-D result).""",
}

_float16 = numpy.dtype(numpy.float16)


class Cumsum(Scan):
    """Cumulative sums along one axis; with ``reverse``, summed from the end of the axis."""

    def forward(self, inputs):
        x = inputs[0]
        axis = self.axis % x.ndim
        if self.reverse:
            x = flip(x, axis)
        xp = get_array_module(x)
        if x.dtype == _float16:
            y = xp.cumsum(x, axis=axis, dtype=numpy.float32).astype(_float16)
        else:
            y = xp.cumsum(x, axis=axis)
        return (flip(y, axis) if self.reverse else y,)

    def backward(self, indexes, grad_outputs):
        return Cumsum(self.axis, not self.reverse).apply(grad_outputs)


@fill(**DOCS)
def cumsum(x, axis=None):
    """Cumulative sum of the elements of ``x`` along ``axis``.

    ``y[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...]`` along ``axis``.

    {args_cumulative}

    Returns:
        Variable: the cumulative sums, of ``x``'s dtype, shaped like ``x``
        (1-D when ``axis`` is None).

    >>> import numpy as np
    >>> cumsum(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=1).array
    array([[1., 3.],
           [3., 7.]], dtype=float32)
    """
    axis = normalize_single_axis(axis, "cumsum")
    if axis is None:
        x = ops.reshape(x, (-1,))
        axis = 0
    return Cumsum(axis).apply((x,))[0]
