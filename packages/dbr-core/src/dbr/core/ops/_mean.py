"""``Variable.mean``: (weighted) means composed of dbr.core's own operators."""

import operator

import numpy

from dbr.core.ops.arithmetic import div, mul
from dbr.core.ops.broadcast import broadcast_to
from dbr.core.ops.cast import cast
from dbr.core.ops.shape import reshape
from dbr.core.ops.sum import sum as _sum
from dbr.core.variable import as_variable

_float16 = numpy.dtype(numpy.float16)


def _axes(axis, ndim):
    """``axis`` as a tuple of non-negative axes (None: every axis), refusing bad ones."""
    if axis is None:
        return tuple(range(ndim))
    try:
        if isinstance(axis, tuple):
            axes = tuple(operator.index(a) for a in axis)
        else:
            axes = (operator.index(axis),)
    except TypeError:
        raise TypeError(
            f"Variable.mean: expected axis to be None, an int or a tuple of ints, got {axis!r}"
        ) from None
    normalized = tuple(a % ndim if -ndim <= a < ndim else None for a in axes)
    if None in normalized or len(set(normalized)) != len(normalized):
        raise ValueError(
            f"Variable.mean: expected distinct axes in [{-ndim}, {ndim}), got {axis!r}"
        )
    return normalized


def variable_mean(self, axis=None, *, weights=None, keepdims=False):
    """The (weighted) arithmetic mean over ``axis``, as ``dbr.functions.average`` computes it.

    Args:
        axis (None, int or tuple of int): the axes to average over (all if None).
        weights (None, Variable or array): with ``axis`` None, weights of the
            Variable's shape; with one axis, 1-D weights of that axis' length.
            The result is ``sum(x * weights) / sum(weights)``.
        keepdims (bool): keep the reduced axes with length one.

    Returns:
        Variable: the means, of the Variable's dtype (float16 is accumulated in float32).

    >>> import numpy as np
    >>> from dbr.core import Variable
    >>> Variable(np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)).mean(axis=1).array
    array([1.5, 4. ], dtype=float32)
    """
    x = self
    if x.dtype.kind != "f":
        raise TypeError(f"Variable.mean: expected a floating Variable, got dtype {x.dtype}")
    axes = _axes(axis, x.ndim)
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    if x.dtype == _float16:
        x = cast(x, numpy.float32)
    if weights is None:
        n = 1
        for a in axes:
            n *= x.shape[a]
        y = _sum(x, axes, keepdims) * (x.dtype.type(1.0 / n) if n else x.dtype.type(numpy.nan))
    else:
        w = as_variable(weights)
        if w.dtype != self.dtype:
            raise TypeError(
                f"Variable.mean: expected weights of dtype {self.dtype}, got {w.dtype}"
            )
        if axis is None:
            if w.shape != x.shape:
                raise ValueError(
                    f"Variable.mean: expected weights of shape {x.shape} (axis None), "
                    f"got {w.shape}"
                )
        elif len(axes) != 1:
            raise ValueError(
                f"Variable.mean: expected axis to be None or a single axis when weights "
                f"are given, got {axis!r}"
            )
        elif w.shape != (x.shape[axes[0]],):
            raise ValueError(
                f"Variable.mean: expected 1-D weights of length {x.shape[axes[0]]} for "
                f"axis {axis}, got shape {w.shape}"
            )
        if w.dtype == _float16:
            w = cast(w, numpy.float32)
        wb = w
        if axis is not None:
            w_shape = tuple(n if i == axes[0] else 1 for i, n in enumerate(x.shape))
            wb = broadcast_to(reshape(w, w_shape), x.shape)
        y = _sum(mul(x, wb), axes, keepdims)
        y = div(y, broadcast_to(_sum(w), y.shape))
    if keepdims and y.shape != kept:
        y = reshape(y, kept)
    return cast(y, _float16) if self.dtype == _float16 else y
