"""roi_average_pooling_2d: the mean of each bin of each region of interest."""

import numpy

from dbr.core import backend
from dbr.functions._docs import fill
from dbr.functions.pooling import _roi


def _mean_weights(axis):
    """``(index, valid)`` taps of one axis as ``(index, valid / count)``, 0 for an empty bin."""
    xp = backend.get_array_module(axis[0])
    index, valid = axis
    count = valid.sum(axis=-1, keepdims=True)
    return index, valid / xp.maximum(count, 1).astype(numpy.float64)


class ROIAveragePooling2D(_roi.IndexedROIFunction):
    """ROI average pooling over whole-pixel bins of ``(y_min, x_min, y_max, x_max)`` regions."""

    who = "roi_average_pooling_2d"

    def _pool(self, x, rois, batch):
        rows, cols = self._bins(x, rois)
        taps = _roi.separable_taps(
            x.shape, x.dtype, batch, _mean_weights(rows), _mean_weights(cols)
        )
        return taps.gather(x), taps


@fill(**_roi.DOCS)
def roi_average_pooling_2d(x, rois, roi_indices, outsize, spatial_scale):
    """Spatial region of interest (ROI) average pooling.

    Like :func:`average_pooling_2d`, but over each region: region ``r`` of
    image ``roi_indices[r]`` has its corners scaled by ``spatial_scale`` and
    rounded to whole pixels (halves to even, as Python's ``round`` in
    Chainer), spans ``max(y_max - y_min, 1)`` by ``max(x_max - x_min, 1)``
    pixels, and is split into ``outh x outw`` bins; bin ``(p, q)`` covers rows
    ``[y_min + floor(p * s), y_min + ceil((p + 1) * s))`` with ``s = height /
    outh`` and the products in float64 as in Chainer (so a bin may reach one
    pixel further than the exact quotient), and likewise columns, clipped to
    the image. Each output element is the mean of its bin in its channel; an
    empty bin (wholly outside the image) gives 0. The regions get no gradient.

    Args:
        x (Variable or array): feature maps of shape ``(N, C, H, W)``, float16,
            float32 or float64 (float16 sums accumulate in float32).
    {pooling_args}

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 4, 4]], np.float32)
    >>> roi_average_pooling_2d(x, rois, np.array([0], np.int32), 2, 1.0).array
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]], dtype=float32)
    """
    return ROIAveragePooling2D(outsize, spatial_scale).apply((x, rois, roi_indices))[0]
