"""roi_average_align_2d: ROI align, the mean of bilinear samples of each bin (Mask R-CNN)."""

import numpy

from dbr.functions._docs import fill
from dbr.functions.pooling import _roi


def _mean_weights(axis, length):
    """An :func:`_roi.align_samples` axis as taps weighted by ``1 / g``, each pixel once."""
    index, weight, _, g = axis
    n_rois, n_out, n_points = index.shape[:3]
    shape = (n_rois, n_out, 2 * n_points)
    weight = weight / g[:, None, None, None].astype(numpy.float64)
    return _roi.merge_taps(index.reshape(shape), weight.reshape(shape), length)


class ROIAverageAlign2D(_roi.ROIAlignFunction):
    """ROI average align over ``(y_min, x_min, y_max, x_max)`` regions."""

    who = "roi_average_align_2d"

    def _pool(self, x, rois, batch):
        y_axis, x_axis = self._bins(x, rois)
        height, width = x.shape[2:]
        taps = _roi.separable_taps(
            x.shape, x.dtype, batch, _mean_weights(y_axis, height), _mean_weights(x_axis, width)
        )
        return taps.gather(x), taps


@fill(**_roi.DOCS)
def roi_average_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None):
    """Spatial region of interest (ROI) average align, as in Mask R-CNN.

    Like :func:`roi_average_pooling_2d`, but without rounding: region ``r`` of
    image ``roi_indices[r]`` has its corners scaled by ``spatial_scale``, is
    forced to be at least 1 by 1, and is split into ``outh x outw`` equal bins
    of size ``(bh, bw)``. Bin ``(p, q)`` is sampled at ``gh x gw`` points
    ``(y_min + (p + (i + 1/2) / gh) bh, x_min + (q + (j + 1/2) / gw) bw)``,
    each read from ``x`` by bilinear interpolation, and the output is their
    mean:

    .. math::
        y_{r c p q} = \\frac{1}{g_h g_w} \\sum_{i, j} \\mathrm{bilinear}(x_{b_r c}, s_{ij}).

    A point more than one pixel outside the map counts as 0 (but still
    counts); a point between -1 and 0, or past the last pixel, reads the edge
    pixel. The regions get no gradient.

    Args:
        x (Variable or array): feature maps of shape ``(N, C, H, W)``, float16,
            float32 or float64 (float16 is interpolated and summed in float32).
    {align_args}

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 2, 2]], np.float32)
    >>> roi_average_align_2d(x, rois, np.array([0], np.int32), 2, 1.0, 1).array
    array([[[[2.5, 3.5],
             [6.5, 7.5]]]], dtype=float32)
    """
    node = ROIAverageAlign2D(outsize, spatial_scale, sampling_ratio)
    return node.apply((x, rois, roi_indices))[0]
