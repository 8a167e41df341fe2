"""roi_pooling_2d: Fast R-CNN's ROI max pooling, regions given with their image index."""

import numpy

from dbr.core import backend
from dbr.functions._docs import fill
from dbr.functions.pooling import _roi

_WHO = "roi_pooling_2d"


class ROIPooling2D(_roi.ROIFunction):
    """ROI max pooling of ``(batch_index, x_min, y_min, x_max, y_max)`` regions, ends inclusive."""

    def __init__(self, outh, outw, spatial_scale):
        self.outsize = (
            _roi.positive_int(_WHO, "outh", outh),
            _roi.positive_int(_WHO, "outw", outw),
        )
        self.spatial_scale = _roi.check_spatial_scale(_WHO, spatial_scale)

    def check_type_forward(self, in_types):
        _roi.check_roi_types(in_types, box_size=5)

    def forward(self, inputs):
        x, rois = inputs
        xp = backend.get_array_module(x)
        batch = xp.trunc(rois[:, 0]).astype(numpy.int64)
        _roi.check_batch_indices(_WHO, "rois[:, 0]", batch, x.shape[0])
        boxes = rois[:, [2, 1, 4, 3]]
        rows, cols = _roi.pooling_windows(boxes, self.spatial_scale, self.outsize, x.shape[2:], 1)
        y, self._taps = _roi.max_over_windows(x, batch, rows, cols, 0.0)
        return (y,)


@fill(**_roi.DOCS)
def roi_pooling_2d(x, rois, outh, outw, spatial_scale):
    """Spatial region of interest (ROI) pooling, as in Fast R-CNN.

    Like :func:`max_pooling_2d`, but over each region: region ``r`` of image
    ``rois[r, 0]`` has its corners scaled by ``spatial_scale`` and rounded to
    whole pixels (halves to even, as Python's ``round`` in Chainer), spans the
    pixels from ``y_min`` to ``y_max`` and from ``x_min`` to ``x_max``
    inclusive (at least one), and is split into ``outh x outw`` bins; bin
    ``(p, q)`` covers rows ``[y_min + floor(p * s), y_min + ceil((p + 1) *
    s))`` with ``s = height / outh`` and the products in float64 as in
    Chainer (so a bin may reach one pixel further than the exact quotient),
    and likewise columns, clipped to the image. Each output element is the
    maximum of its bin in its channel; an empty bin (wholly outside the
    image) gives 0. The gradient flows to the maximum (the first in raster
    order on a tie); the regions get none.

    Args:
        x (Variable or array): feature maps of shape ``(N, C, H, W)``, float16,
            float32 or float64.
        rois (Variable or array): regions of shape ``(R, 5)``, each row
            ``(batch_index, x_min, y_min, x_max, y_max)``: the image's index in
            ``[0, N)`` (truncated to an integer), then the corners in the input
            image's coordinates; any floating dtype.
        outh (int): the height of the output, positive.
        outw (int): the width of the output, positive.
    {scale_and_returns}
        TypeError: ``outh``, ``outw`` or ``spatial_scale`` has the wrong type.
        ValueError: ``outh``, ``outw`` or ``spatial_scale`` is not positive, or
            a batch index is out of range.

    See `Fast R-CNN <https://arxiv.org/abs/1504.08083>`_.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> rois = np.array([[0, 0, 0, 3, 3]], np.float32)
    >>> roi_pooling_2d(x, rois, 2, 2, 1.0).array
    array([[[[ 5.,  7.],
             [13., 15.]]]], dtype=float32)
    """
    return ROIPooling2D(outh, outw, spatial_scale).apply((x, rois))[0]
