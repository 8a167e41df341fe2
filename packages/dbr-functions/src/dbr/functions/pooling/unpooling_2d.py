"""unpooling_2d: spread each element over a 2-d window of the output."""

from dbr.functions._docs import fill
from dbr.functions.pooling.unpooling_nd import apply_unpooling

# The windows, output size and result of unpooling_2d and upsampling_2d (see _docs.fill).
DOCS = {
    "windows_and_outsize": """\
ksize (int or pair of ints): window size; ``k`` means ``(k, k)``.
stride (int, pair of ints or None): window stride; None means ``ksize``.
pad (int or pair of ints): padding cropped from both sides of each
    spatial axis.
outsize (None, int or pair of ints): the output's ``(h_o, w_o)``; a
    pooling of that shape must give ``(h, w)``. None means the smallest
    one: ``h_o = s_h (h - 1) + k_h - 2 p_h`` (``- s_h + 1`` when
    ``cover_all``), likewise ``w_o``.""",
    "result": """\
Returns:
    Variable: of shape ``(n, c, h_o, w_o)`` and ``x``'s dtype.""",
}


@fill(**DOCS)
def unpooling_2d(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Inverse of 2-d pooling: spreads each element over a window.

    For input ``x`` of shape ``(n, c, h, w)``, element ``(i, j)`` of a
    channel is added to every element of window ``(i, j)`` of the output,
    the windows being those a pooling with the same ``ksize``, ``stride``,
    ``pad`` and ``cover_all`` reads from an input of the output's shape
    (padding is cropped away; where windows overlap, their values add up).
    Its gradient sums the output gradient over the windows.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, h, w)``.
        {windows_and_outsize}
        cover_all (bool): whether the matching pooling uses ``cover_all``.

    {result}

    >>> import numpy as np
    >>> unpooling_2d(np.array([[[[1, 2], [3, 4]]]], np.float32), 2, outsize=(3, 4)).array
    array([[[[1., 1., 2., 2.],
             [1., 1., 2., 2.],
             [3., 3., 4., 4.]]]], dtype=float32)
    """
    return apply_unpooling(
        x, 2, ksize, stride, pad, outsize, cover_all, "Unpooling2D", "unpooling_2d"
    )
