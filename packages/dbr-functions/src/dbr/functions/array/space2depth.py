"""space2depth: move spatial neighbourhoods into blocks of channels (pixel unshuffle)."""

from dbr.functions.array.depth2space import Space2Depth, check_block_size


def space2depth(X, r):
    """Move spatial blocks into depth (channels): ``(n, c, h*r, w*r)`` to ``(n, r*r*c, h, w)``.

    ``y[b, (p*r + q)*c + k, i, j] = X[b, k, i*r + p, j*r + q]`` for
    ``0 <= p, q < r``, the layout of TensorFlow's ``space_to_depth``. It is
    the inverse of :func:`~dbr.functions.array.depth2space.depth2space`, which
    is also its gradient.

    Args:
        X (Variable or array): input of shape ``(n, c, h*r, w*r)``, floating;
            its height and width must be multiples of ``r``.
        r (int): the block size (``r >= 1``).

    Returns:
        Variable: of shape ``(n, r*r*c, h, w)`` and ``X``'s dtype.

    >>> import numpy as np
    >>> X = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> space2depth(X, 2)[0, :, 0, 0].array
    array([0., 1., 4., 5.], dtype=float32)
    """
    return Space2Depth(check_block_size(r, "space2depth")).apply((X,))[0]
