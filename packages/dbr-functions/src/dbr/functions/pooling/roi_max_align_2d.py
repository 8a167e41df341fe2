"""roi_max_align_2d: ROI align taking the largest bilinear sample of each bin."""

from dbr.functions._docs import fill
from dbr.functions.pooling import _roi


class ROIMaxAlign2D(_roi.ROIAlignFunction):
    """ROI max align over ``(y_min, x_min, y_max, x_max)`` regions."""

    who = "roi_max_align_2d"

    def _pool(self, x, rois, batch):
        y_axis, x_axis = self._bins(x, rois)
        return _roi.max_over_samples(x, batch, y_axis, x_axis)


@fill(**_roi.DOCS)
def roi_max_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None):
    """Spatial region of interest (ROI) max align.

    Samples each bin exactly as :func:`roi_average_align_2d` does, but outputs
    the largest of its ``gh x gw`` bilinear samples instead of their mean.
    Points more than one pixel outside the map are skipped; a bin with none
    left gives ``-inf``, as in Chainer. The gradient flows to the four pixels interpolated by the
    winning sample (the first in raster order on a tie), weighted by their
    bilinear weights; the regions get none.

    Args:
        x (Variable or array): feature maps of shape ``(N, C, H, W)``, float16,
            float32 or float64 (float16 is interpolated in float32).
    {align_args}

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 2, 2]], np.float32)
    >>> roi_max_align_2d(x, rois, np.array([0], np.int32), 1, 1.0, 2).array
    array([[[[7.5]]]], dtype=float32)
    """
    node = ROIMaxAlign2D(outsize, spatial_scale, sampling_ratio)
    return node.apply((x, rois, roi_indices))[0]
