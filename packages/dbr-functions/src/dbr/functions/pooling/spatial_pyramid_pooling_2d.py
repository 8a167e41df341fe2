"""spatial_pyramid_pooling_2d: max pooling at several scales, flattened and joined."""

import math

from dbr.core import ops
from dbr.functions._invalid_type import invalid_type
from dbr.functions.array.concat import concat
from dbr.functions.pooling.max_pooling_nd import apply_max_pooling


def spatial_pyramid_pooling_2d(x, pyramid_height, pooling=None):
    """Spatial pyramid pooling: a fixed-length feature whatever the input's size.

    Level ``l`` (``0 <= l < pyramid_height``) max-pools ``x`` of shape
    ``(n, c, h, w)`` over ``2^l x 2^l`` bins, with ``cover_all`` windows of
    size and stride

    ``k_h = ceil(h / 2^l)``, ``k_w = ceil(w / 2^l)``

    and padding ``p_h = (2^l k_h - h) // 2``, ``p_w = (2^l k_w - w) // 2``.
    Each level's result is flattened to ``(n, c * h_l * w_l, 1, 1)`` and the
    levels are concatenated along axis 1, coarsest first.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, h, w)``.
        pyramid_height (int): the number of levels (>= 1).
        pooling (str): the pooling of each level; only ``'max'`` is supported
            (None is an error, as in Chainer v7).

    Returns:
        Variable: of shape ``(n, c * sum_l h_l w_l, 1, 1)`` and ``x``'s dtype;
        ``h_l w_l = 4^l`` unless a level's window is one element wide with an
        odd remainder, when the bins of that axis number one fewer.

    Raises:
        ValueError: ``pooling`` is not ``'max'`` or ``pyramid_height`` < 1.
        dbr.core.type_check.InvalidType: ``x`` is not a 4-d floating array.

    >>> import numpy as np
    >>> x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    >>> spatial_pyramid_pooling_2d(x, 2, pooling='max').shape
    (1, 10, 1, 1)
    """
    who = "spatial_pyramid_pooling_2d"
    if pooling != "max":
        raise ValueError(f"{who}: pooling must be 'max', got {pooling!r}")
    if isinstance(pyramid_height, bool) or not hasattr(pyramid_height, "__index__"):
        raise TypeError(f"{who}: pyramid_height must be an int, got {pyramid_height!r}")
    if pyramid_height < 1:
        raise ValueError(f"{who}: pyramid_height must be >= 1, got {pyramid_height!r}")
    if x.ndim != 4:
        expect, actual = "x.ndim == 4", f"{x.ndim} != 4"
        raise invalid_type(who, expect, actual, forward=False)
    n, _, h, w = x.shape
    levels = []
    for level in range(int(pyramid_height)):
        bins = 2**level
        ksize = (math.ceil(h / bins), math.ceil(w / bins))
        pad = ((ksize[0] * bins - h) // 2, (ksize[1] * bins - w) // 2)
        y = apply_max_pooling(x, 2, ksize, None, pad, True, False, "MaxPooling2D", who)
        levels.append(ops.reshape(y, (n, -1, 1, 1)))
    return levels[0] if len(levels) == 1 else concat(levels, axis=1)
