"""roi_max_pooling_2d: the maximum of each bin of each region of interest."""

import numpy

from dbr.functions._docs import fill
from dbr.functions.pooling import _roi


class ROIMaxPooling2D(_roi.IndexedROIFunction):
    """ROI max pooling over whole-pixel bins of ``(y_min, x_min, y_max, x_max)`` regions."""

    who = "roi_max_pooling_2d"

    def _pool(self, x, rois, batch):
        rows, cols = self._bins(x, rois)
        return _roi.max_over_windows(x, batch, rows, cols, -numpy.inf)


@fill(**_roi.DOCS)
def roi_max_pooling_2d(x, rois, roi_indices, outsize, spatial_scale):
    """Spatial region of interest (ROI) max pooling.

    Like :func:`max_pooling_2d`, but over each region: region ``r`` of image
    ``roi_indices[r]`` has its corners scaled by ``spatial_scale`` and rounded
    to whole pixels (halves to even, as Python's ``round`` in Chainer), spans
    ``max(y_max - y_min, 1)`` by ``max(x_max - x_min, 1)`` pixels, and is split
    into ``outh x outw`` bins; bin ``(p, q)`` covers rows
    ``[y_min + floor(p * s), y_min + ceil((p + 1) * s))`` with ``s = height /
    outh`` and the products in float64 as in Chainer (so a bin may reach one
    pixel further than the exact quotient), and likewise columns, clipped to
    the image. Each output element is the maximum of its bin in its channel;
    an empty bin (wholly outside the image) gives ``-inf``, as in Chainer.
    The gradient flows to the maximum (the first in raster order on a tie);
    the regions get none.

    Args:
        x (Variable or array): feature maps of shape ``(N, C, H, W)``, float16,
            float32 or float64.
    {pooling_args}

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 4, 4], [1, 1, 3, 3]], np.float32)
    >>> roi_max_pooling_2d(x, rois, np.array([0, 0], np.int32), 2, 1.0).array
    array([[[[ 5.,  7.],
             [13., 15.]]],
    <BLANKLINE>
    <BLANKLINE>
           [[[ 5.,  6.],
             [ 9., 10.]]]], dtype=float32)
    """
    return ROIMaxPooling2D(outsize, spatial_scale).apply((x, rois, roi_indices))[0]
