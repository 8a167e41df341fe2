"""maxout: the maximum over groups of units."""

import numbers

from dbr.core import as_variable, ops
from dbr.functions._invalid_type import invalid_type
from dbr.functions.math.minmax import max as max_


def maxout(x, pool_size, axis=1):
    """Maxout activation.

    The ``axis`` dimension of ``x``, of length ``M * pool_size``, is split
    into ``(M, pool_size)`` and the maximum is taken over each group of
    ``pool_size`` consecutive elements. The gradient flows to the maximum of
    each group (to every maximum when several tie).

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), typically ``(batch, M * pool_size)`` from a linear layer.
        pool_size (int): the number of units per group, positive.
        axis (int): the axis to pool (negative counts from the last axis);
            its length must be a multiple of ``pool_size``.

    Returns:
        Variable: of ``x``'s dtype and shape, except ``M`` along ``axis``.

    Raises:
        TypeError: ``pool_size`` or ``axis`` is not an int.
        ValueError: ``pool_size`` is not positive.
        InvalidType: ``axis`` is not an axis of ``x``, or its length is not a
            multiple of ``pool_size``.

    >>> import numpy as np
    >>> x = np.array([[1.0, 5.0, 3.0, 2.0, 0.0, 4.0]], np.float32)
    >>> maxout(x, 3).array
    array([[5., 4.]], dtype=float32)
    """
    if isinstance(pool_size, bool) or not isinstance(pool_size, numbers.Integral):
        raise TypeError(f"maxout: expected pool_size to be an int, got {pool_size!r}")
    if pool_size <= 0:
        raise ValueError(f"maxout: expected pool_size > 0, got {pool_size}")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"maxout: expected axis to be an int, got {axis!r}")
    pool_size = int(pool_size)
    x = as_variable(x)
    ndim = x.ndim
    if x.dtype.kind != "f":
        raise invalid_type("maxout", "x.dtype.kind == 'f'", f"{x.dtype.kind!r} != 'f'")
    if not -ndim <= axis < ndim:
        raise invalid_type("maxout", f"-x.ndim <= {axis} < x.ndim", f"x.ndim == {ndim}")
    axis = int(axis) % ndim
    length = x.shape[axis]
    if length % pool_size != 0:
        raise invalid_type(
            "maxout",
            f"x.shape[{axis}] % pool_size == 0",
            f"x.shape[{axis}] == {length}, pool_size == {pool_size}",
        )
    shape = x.shape[:axis] + (length // pool_size, pool_size) + x.shape[axis + 1 :]
    return max_(ops.reshape(x, shape), axis=axis + 1)
