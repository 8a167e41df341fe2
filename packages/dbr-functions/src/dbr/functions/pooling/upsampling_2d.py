"""upsampling_2d: put each element back where max pooling found it."""

from dbr.core import Variable, type_check
from dbr.functions._docs import fill
from dbr.functions.connection._im2col import as_tuple
from dbr.functions.pooling._pooling import SpreadToOutsize, Windows, WindowScatter
from dbr.functions.pooling.unpooling_2d import DOCS


class Upsampling2D(SpreadToOutsize, WindowScatter):
    """Adds each element of ``x`` at the window position ``indexes`` gives; zeros elsewhere.

    The transpose of gathering those positions (:class:`WindowGather`),
    which is its gradient.

    Args:
        indexes: integer array of ``x``'s shape, as ``max_pooling_2d``
            returns it.
        ksize, stride, pad, outsize, cover_all: as :func:`upsampling_2d` takes them.
    """

    def __init__(self, indexes, ksize, stride=None, pad=0, outsize=None, cover_all=True):
        who = "upsampling_2d"
        windows = Windows(2, ksize, stride, pad, cover_all, who)
        if isinstance(indexes, Variable):
            indexes = indexes.array
        if getattr(getattr(indexes, "dtype", None), "kind", None) not in ("i", "u"):
            raise TypeError(
                f"{who}: indexes must be an integer array (as max_pooling_2d returns), "
                f"got {type(indexes).__name__} of dtype {getattr(indexes, 'dtype', None)}"
            )
        if indexes.size and (int(indexes.min()) < 0 or int(indexes.max()) >= windows.size):
            raise ValueError(
                f"{who}: indexes must lie in [0, {windows.size}) for ksize={windows.ksize}, "
                f"got values from {int(indexes.min())} to {int(indexes.max())}"
            )
        if outsize is not None:
            outsize = as_tuple(outsize, 2, "outsize", who, 1)
        super().__init__(windows, indexes, outsize)
        self.outsize = outsize

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        w = self.windows
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 4,
            x_type.shape == self.indexes.shape,
        )
        w.check_spread_input(x_type, self.outsize)


@fill(**DOCS)
def upsampling_2d(x, indexes, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Upsampling with the indexes of a max pooling: the maxima go back where they were.

    For input ``x`` of shape ``(n, c, h, w)``, element ``(i, j)`` of a
    channel is added at position ``indexes[.., i, j]`` (``a * k_w + b`` for
    row ``a``, column ``b``) of window ``(i, j)`` of the output, the windows
    being those of the max pooling that gave ``indexes``; every other element
    is zero (padding is cropped away; overlapping windows add up). Its
    gradient gathers the output gradient at those positions.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, h, w)``.
        indexes (array): integer array of ``x``'s shape with entries in
            ``[0, k_h * k_w)``, as ``max_pooling_2d(..., return_indices=True)``
            returns it.
        {windows_and_outsize}
        cover_all (bool): whether the max pooling used ``cover_all``.

    {result}

    >>> import numpy as np
    >>> from dbr.functions.pooling.max_pooling_2d import max_pooling_2d
    >>> x = np.array([[[[1, 4, 2, 0], [3, 0, 0, 5]]]], np.float32)
    >>> y, indexes = max_pooling_2d(x, 2, return_indices=True)
    >>> upsampling_2d(y, indexes, 2, outsize=x.shape[2:]).array
    array([[[[0., 4., 0., 0.],
             [0., 0., 0., 5.]]]], dtype=float32)
    """
    return Upsampling2D(indexes, ksize, stride, pad, outsize, cover_all).apply((x,))[0]
