"""roi_max_align_2d: ROI align taking the largest bilinear sample of each bin."""

from dbr.functions.pooling import _roi


class ROIMaxAlign2D(_roi.ROIAlignFunction):
    """ROI max align over ``(y_min, x_min, y_max, x_max)`` regions."""

    who = "roi_max_align_2d"

    def _pool(self, x, rois, batch):
        y_axis, x_axis = self._bins(x, rois)
        return _roi.max_over_samples(x, batch, y_axis, x_axis)


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
        rois (Variable or array): regions of shape ``(R, 4)``, each row
            ``(y_min, x_min, y_max, x_max)`` in the input image's coordinates;
            any floating dtype.
        roi_indices (Variable or array): the image of each region, a signed
            integer array of shape ``(R,)`` with values in ``[0, N)``.
        outsize (int or (int, int)): ``(outh, outw)``; ``o`` means ``(o, o)``.
        spatial_scale (float): the ratio of the feature map's size to the
            image's (e.g. ``1 / 16``), positive.
        sampling_ratio (None, int or (int, int)): ``(gh, gw)``, the sample
            points per bin along each axis (``s`` means ``(s, s)``), each an
            int >= 1 or None; None takes ``ceil`` of the bin's size along that
            axis, region by region.

    Returns:
        Variable: of shape ``(R, C, outh, outw)`` and ``x``'s dtype.

    Raises:
        InvalidType: an input has the wrong dtype, ndim or shape.
        TypeError: ``outsize``, ``spatial_scale`` or ``sampling_ratio`` has the
            wrong type.
        ValueError: one of them is out of range, or an index is.

    See `Mask R-CNN <https://arxiv.org/abs/1703.06870>`_.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 2, 2]], np.float32)
    >>> roi_max_align_2d(x, rois, np.array([0], np.int32), 1, 1.0, 2).array
    array([[[[7.5]]]], dtype=float32)
    """
    node = ROIMaxAlign2D(outsize, spatial_scale, sampling_ratio)
    return node.apply((x, rois, roi_indices))[0]
