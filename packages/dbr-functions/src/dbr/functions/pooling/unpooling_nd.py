"""unpooling_nd, unpooling_1d, unpooling_3d: spread each element over a window of the output."""

from dbr.core import type_check
from dbr.functions.connection._im2col import as_tuple
from dbr.functions.pooling._pooling import SpreadToOutsize, Windows, WindowSpread, spatial_ndim


class UnpoolingND(SpreadToOutsize, WindowSpread):
    """Copies each element of ``x`` to every element of its window; overlaps add up.

    The transpose of summing over windows (:class:`WindowSum` with
    coefficient 1), which is its gradient.

    Args:
        ndim (int): the number of spatial axes.
        ksize, stride, pad, outsize, cover_all: as :func:`unpooling_nd` takes them.
        label (str): the function's name in type-check messages.
        who (str): the function named in errors about the options.
    """

    def __init__(
        self,
        ndim,
        ksize,
        stride=None,
        pad=0,
        outsize=None,
        cover_all=True,
        label="UnpoolingND",
        who="unpooling_nd",
    ):
        windows = Windows(ndim, ksize, stride, pad, cover_all, who)
        if outsize is not None:
            outsize = as_tuple(outsize, ndim, "outsize", who, 1)
        super().__init__(windows, outsize, 1)
        self.outsize = outsize
        self._label = label

    @property
    def label(self):
        """The function's name in messages."""
        return self._label

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        w = self.windows
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim == w.ndim + 2)
        w.check_spread_input(x_type, self.outsize)


def apply_unpooling(x, ndim, ksize, stride, pad, outsize, cover_all, label, who):
    """Apply :class:`UnpoolingND` and return its output Variable."""
    func = UnpoolingND(ndim, ksize, stride, pad, outsize, cover_all, label, who)
    return func.apply((x,))[0]


def unpooling_nd(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """N-dimensional inverse of pooling: spreads each element over a window.

    For input ``x`` of shape ``(n, c, d_1, ..., d_N)``, element ``o`` of a
    channel is added to every element of window ``o`` of the output, the
    windows being those a pooling with the same ``ksize``, ``stride``,
    ``pad`` and ``cover_all`` reads from an input of the output's shape
    (padding is cropped away; where windows overlap, their values add up).
    Its gradient sums the output gradient over the windows.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, ..., d_N)``, ``N >= 1``.
        ksize (int or tuple of ints): window size; ``k`` means ``(k, ..., k)``.
            A tuple gives the number of spatial axes.
        stride (int, tuple of ints or None): window stride; None means ``ksize``.
        pad (int or tuple of ints): padding cropped from both sides of each
            spatial axis.
        outsize (None, int or tuple of ints): the output's spatial shape; a
            pooling of that shape must give ``x``'s. None means the smallest
            one: ``s_i (d_i - 1) + k_i - 2 p_i`` (``- s_i + 1`` when ``cover_all``).
        cover_all (bool): whether the matching pooling uses ``cover_all``.

    Returns:
        Variable: of shape ``(n, c) + outsize`` and ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    >>> unpooling_nd(x, 2, cover_all=False).array
    array([[[[1., 1., 2., 2.],
             [1., 1., 2., 2.],
             [3., 3., 4., 4.],
             [3., 3., 4., 4.]]]], dtype=float32)
    """
    ndim = spatial_ndim(x, ksize)
    return apply_unpooling(
        x, ndim, ksize, stride, pad, outsize, cover_all, "UnpoolingND", "unpooling_nd"
    )


def unpooling_1d(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """1-dimensional inverse of pooling: :func:`unpooling_nd` on ``(n, c, d)`` inputs.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d)``.
        ksize (int or tuple of one int): window size.
        stride (int, tuple of one int or None): window stride; None means ``ksize``.
        pad (int or tuple of one int): padding cropped from both sides.
        outsize (None, int or tuple of one int): the output's length.
        cover_all (bool): whether the matching pooling uses ``cover_all``.

    Returns:
        Variable: of shape ``(n, c, outsize)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> unpooling_1d(np.array([[[1, 2]]], np.float32), 2, cover_all=False).array
    array([[[1., 1., 2., 2.]]], dtype=float32)
    """
    return apply_unpooling(
        x, 1, ksize, stride, pad, outsize, cover_all, "Unpooling1D", "unpooling_1d"
    )


def unpooling_3d(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """3-dimensional inverse of pooling: :func:`unpooling_nd` on 5-d inputs.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, d_2, d_3)``.
        ksize (int or tuple of 3 ints): window size.
        stride (int, tuple of 3 ints or None): window stride; None means ``ksize``.
        pad (int or tuple of 3 ints): padding cropped from both sides.
        outsize (None, int or tuple of 3 ints): the output's spatial shape.
        cover_all (bool): whether the matching pooling uses ``cover_all``.

    Returns:
        Variable: of shape ``(n, c) + outsize`` and ``x``'s dtype.

    >>> import numpy as np
    >>> unpooling_3d(np.ones((1, 1, 2, 2, 2), np.float32), 2).shape
    (1, 1, 3, 3, 3)
    >>> unpooling_3d(np.ones((1, 1, 2, 2, 2), np.float32), 2, cover_all=False).shape
    (1, 1, 4, 4, 4)
    """
    return apply_unpooling(
        x, 3, ksize, stride, pad, outsize, cover_all, "Unpooling3D", "unpooling_3d"
    )
