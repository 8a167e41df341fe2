"""clip: limit the elements of an input to an interval."""

import numbers

from dbr.core import backend
from dbr.core.utils import force_array, force_type
from dbr.functions.math._elementwise import FloatInput
from dbr.functions.math.maximum import MaskGrad


def _check_bound(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"clip: expected {name} to be a real scalar or None, got {value!r}")
    return float(value)


class Clip(FloatInput):
    """Elementwise ``min(max(x, x_min), x_max)``; either bound may be None (no limit)."""

    def __init__(self, x_min, x_max):
        x_min = _check_bound(x_min, "x_min")
        x_max = _check_bound(x_max, "x_max")
        if x_min is None and x_max is None:
            raise ValueError("clip: expected x_min or x_max to be set, got None for both")
        if x_min is not None and x_max is not None and not x_min < x_max:
            raise ValueError(f"clip: expected x_min < x_max, got x_min={x_min}, x_max={x_max}")
        self.x_min = x_min
        self.x_max = x_max

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = backend.get_array_module(x)
        if self.x_min is None:
            y = xp.minimum(x, force_type(x.dtype, self.x_max))
        elif self.x_max is None:
            y = xp.maximum(x, force_type(x.dtype, self.x_min))
        else:
            y = xp.clip(x, force_type(x.dtype, self.x_min), force_type(x.dtype, self.x_max))
        return (force_array(y, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array
        dtype = x.dtype
        if self.x_min is None:
            inside = x <= force_type(dtype, self.x_max)
        elif self.x_max is None:
            inside = x >= force_type(dtype, self.x_min)
        else:
            inside = x >= force_type(dtype, self.x_min)
            inside &= x <= force_type(dtype, self.x_max)
        return MaskGrad(inside).apply(grad_outputs)


def clip(x, x_min, x_max):
    """Clip (limit) the elements of ``x`` to the interval ``[x_min, x_max]``.

    Elements below ``x_min`` become ``x_min`` and elements above ``x_max``
    become ``x_max``. The gradient is 1 inside the interval, its ends
    included, and 0 outside.

    Args:
        x (Variable or array): input of a floating dtype, any shape.
        x_min (float or None): the lower bound; None for no lower bound.
        x_max (float or None): the upper bound; None for no upper bound. At
            least one bound must be given, and ``x_min < x_max`` when both are.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        ValueError: both bounds are None, or ``x_min >= x_max``.
        TypeError: a bound is not a real scalar or None.

    >>> import numpy as np
    >>> clip(np.array([-2.0, 0.5, 3.0], np.float32), -1.0, 1.0).array
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    return Clip(x_min, x_max).apply((x,))[0]
