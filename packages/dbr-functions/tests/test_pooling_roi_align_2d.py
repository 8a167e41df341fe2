"""ROI align, average and max (roi_average_align_2d, roi_max_align_2d), against one loop reference.

Both functions read the same bilinear sample points per bin; they differ only
in how a bin's points reduce: the average counts points more than a pixel
outside as 0, the max leaves them out (an empty bin is -inf).
"""

import math
import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, backend, testing
from dbr.core.type_check import InvalidType
from dbr.functions.array.where import where
from dbr.functions.pooling.roi_average_align_2d import roi_average_align_2d
from dbr.functions.pooling.roi_max_align_2d import roi_max_align_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def bilinear(image, y, x):
    """The value at ``(y, x)`` read as ROI align does; None more than a pixel outside."""
    height, width = image.shape
    if y < -1 or y > height or x < -1 or x > width:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= width - 1:
        x0 = x1 = width - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return (
        (1 - ly) * (1 - lx) * image[y0, x0]
        + (1 - ly) * lx * image[y0, x1]
        + ly * (1 - lx) * image[y1, x0]
        + ly * lx * image[y1, x1]
    )


def sample_points(roi, spatial_scale, outh, outw, ratio):
    """The ``(p, q) -> [(y, x), ...]`` sample points of each bin, in raster order."""
    y0, x0, y1, x1 = [float(v) * spatial_scale for v in roi]
    bin_h = max(y1 - y0, 1.0) / outh
    bin_w = max(x1 - x0, 1.0) / outw
    g_h = ratio[0] if ratio[0] is not None else math.ceil(bin_h)
    g_w = ratio[1] if ratio[1] is not None else math.ceil(bin_w)
    points = {}
    for p in range(outh):
        for q in range(outw):
            ys = [y0 + p * bin_h + (i + 0.5) * bin_h / g_h for i in range(g_h)]
            xs = [x0 + q * bin_w + (j + 0.5) * bin_w / g_w for j in range(g_w)]
            points[p, q] = [(py, px) for py in ys for px in xs]
    return points


def finite(y):
    """``y`` with its empty bins' -inf replaced by 0, for the numerical gradient checks."""
    xp = backend.get_array_module(y.array)
    return where(xp.isfinite(y.array), y, xp.zeros_like(y.array))


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def _mean(values):
    # The average divides by every point, those outside (None) counting as 0.
    return sum(v for v in values if v is not None) / len(values)


def _max(values):
    values = [v for v in values if v is not None]
    return max(values) if values else -numpy.inf


# kind: (the function, its node's name, how a bin's points reduce)
KINDS = {
    "average": (roi_average_align_2d, "ROIAverageAlign2D", _mean),
    "max": (roi_max_align_2d, "ROIMaxAlign2D", _max),
}


def reference(kind, x, rois, roi_indices, outsize, spatial_scale, sampling_ratio):
    """Loop-based ROI align: each bin's points, reduced as ``kind`` does."""
    reduce = KINDS[kind][2]
    x = x.astype(numpy.float64)
    outh, outw = pair(outsize)
    y = numpy.zeros((len(rois), x.shape[1], outh, outw))
    for r, (roi, n) in enumerate(zip(rois, roi_indices)):
        points = sample_points(roi, spatial_scale, outh, outw, pair(sampling_ratio))
        for (p, q), pts in points.items():
            for c in range(x.shape[1]):
                y[r, c, p, q] = reduce([bilinear(x[n, c], py, px) for py, px in pts])
    return y


def align(kind, *args, **kwargs):
    return KINDS[kind][0](*args, **kwargs)


@testing.parameterize(
    *testing.product(
        {
            "kind": list(KINDS),
            "outsize,spatial_scale": [(2, 0.6), ((3, 4), 0.5), ((1, 2), 1.0)],
            "sampling_ratio": [None, 2, (1, 3), (None, 2)],
            "dtype": FLOATS,
        }
    )
)
class TestROIAlign2D(families.ROIPoolingCase):
    boxes_name = "ALIGN_ROIS"

    def before_test(self, test_name):
        # The max switches points where two are within rounding of each other.
        self.dodge_nondifferentiable = self.kind == "max"

    def forward(self, inputs, device):
        x, rois, roi_indices = inputs
        y = align(
            self.kind, x, rois, roi_indices, self.outsize, self.spatial_scale, self.sampling_ratio
        )
        return (finite(y),)

    def forward_expected(self, inputs):
        y = reference(self.kind, *inputs, self.outsize, self.spatial_scale, self.sampling_ratio)
        return (numpy.where(numpy.isfinite(y), y, 0).astype(self.dtype),)

    @property
    def function(self):
        return KINDS[self.kind][0]

    def bad_inputs(self):
        x = numpy.zeros((2, 1, 4, 4), self.dtype)
        rois = numpy.zeros((1, 4), self.dtype)
        index = numpy.zeros(1, numpy.int32)
        name, who = KINDS[self.kind][1], KINDS[self.kind][0].__name__
        return [
            ((x[0], rois, index, 2, 1.0), InvalidType, (name, "x.ndim == 4")),
            ((x, rois[:, :3], index, 2, 1.0), InvalidType, (name, "rois.shape[1] == 4")),
            (
                (x, rois, index.astype(self.dtype), 2, 1.0),
                InvalidType,
                (name, "roi_indices.dtype.kind == 'i'"),
            ),
            ((x.astype(numpy.int32), rois, index, 2, 1.0), InvalidType, "x.dtype.kind == 'f'"),
            (
                (x, rois, index, 2, 1.0, 0),
                ValueError,
                f"{who}: expected sampling_ratio >= 1, got 0",
            ),
            (
                (x, rois, index, 2, 1.0, 1.5),
                TypeError,
                f"{who}: expected sampling_ratio to be None, an int",
            ),
            ((x, rois, index, 2, 1.0, (1, 2, 3)), TypeError, "got (1, 2, 3)"),
            (
                (x, rois, index, (2, -1), 1.0),
                ValueError,
                f"{who}: expected outsize to be positive",
            ),
            (
                (x, rois, index, 2, float("inf")),
                ValueError,
                f"{who}: expected spatial_scale to be finite",
            ),
            (
                (x, rois, numpy.array([3], numpy.int32), 2, 1.0),
                ValueError,
                "0 <= roi_indices < x.shape[0] == 2",
            ),
        ]


@pytest.mark.parametrize("kind", list(KINDS))
def test_default_sampling_ratio_adapts_to_each_region(kind):
    x = numpy.random.uniform(-1, 1, (1, 2, 9, 9))
    rois = numpy.array([[0.5, 0.5, 1.0, 1.5], [0.2, 0.1, 8.3, 7.9]])
    y = align(kind, x, rois, numpy.array([0, 0], numpy.int32), 2, 1.0)
    expected = reference(kind, x, rois, [0, 0], 2, 1.0, None)
    testing.assert_allclose(y.array, expected, atol=1e-12, rtol=1e-12)
    # The second region's bins are about 4 pixels tall: 5 x 4 points each.
    assert len(sample_points(rois[1], 1.0, 2, 2, (None, None))[0, 0]) == 5 * 4


def test_average_counts_points_outside_as_zero():
    x = Variable(numpy.ones((1, 1, 2, 2)))
    rois = numpy.array([[-4.0, 0.0, 2.0, 1.0]])
    y = roi_average_align_2d(x, rois, numpy.array([0], numpy.int32), 1, 1.0, (2, 1))
    # Points (-2.5, 0.5), more than a pixel out, and (0.5, 0.5): the mean is (0 + 1) / 2.
    testing.assert_allclose(y.array, [[[[0.5]]]], atol=0, rtol=1e-12)
    y.grad = numpy.ones(y.shape)
    y.backward()
    testing.assert_allclose(x.grad[0, 0], [[0.125, 0.125], [0.125, 0.125]], atol=0, rtol=1e-12)


def test_max_gradient_goes_to_the_corners_of_the_largest_point():
    x = Variable(numpy.array([[[[0.0, 1.0, 2.0], [3.0, 4.0, 9.0], [6.0, 7.0, 8.0]]]]))
    rois = numpy.array([[0.0, 0.0, 2.0, 2.0], [-9.0, -9.0, -6.0, -6.0]])
    y = roi_max_align_2d(x, rois, numpy.array([0, 0], numpy.int32), 1, 1.0, 2)
    # Points (0.5 or 1.5, 0.5 or 1.5); (1.5, 1.5) is largest: (4 + 9 + 7 + 8) / 4.
    # The second region lies wholly outside: -inf (as in Chainer), and no gradient.
    testing.assert_allclose(y.array, [[[[7.0]]], [[[-numpy.inf]]]], atol=0, rtol=1e-12)
    y.grad = numpy.array([[[[4.0]]], [[[3.0]]]])
    y.backward()
    expected = [[0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    testing.assert_allclose(x.grad[0, 0], expected, atol=0, rtol=1e-12)


def test_max_tie_goes_to_the_first_point():
    x = Variable(numpy.ones((1, 1, 2, 2)))
    rois = numpy.array([[0.0, 0.0, 2.0, 2.0]])
    y = roi_max_align_2d(x, rois, numpy.array([0], numpy.int32), 1, 1.0, 2)
    assert y.array[0, 0, 0, 0] == 1.0
    y.grad = numpy.ones(y.shape)
    y.backward()
    # The first point (0.5, 0.5) interpolates the four pixels equally.
    testing.assert_allclose(x.grad[0, 0], numpy.full((2, 2), 0.25), atol=0, rtol=1e-12)


@pytest.mark.parametrize("kind, outside", [("average", 0.0), ("max", -numpy.inf)])
def test_points_on_the_limits_read_the_edge_pixels(kind, outside):
    x = numpy.arange(6.0).reshape(1, 1, 2, 3)
    # One point per region, at x = 1.5 and y = -1, y = 2 == H (still inside, read
    # from rows 0 and 1), then y = -1.25 (outside: 0 for the average, -inf for the max).
    rois = numpy.array([[-2.0, 1.0, 0.0, 2.0], [0.0, 1.0, 4.0, 2.0], [-2.5, 1.0, 0.0, 2.0]])
    y = align(kind, x, rois, numpy.array([0, 0, 0], numpy.int32), 1, 1.0, 1)
    testing.assert_allclose(y.array.ravel(), [1.5, 4.5, outside], atol=0, rtol=1e-12)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("outsize", [(2, 3), (3, 2)])
@pytest.mark.parametrize("spatial_scale", [1.0, 0.5])
@pytest.mark.parametrize("sampling_ratio", [None, 2, (1, 3)])
def test_half_pixel_and_outside_regions(kind, outsize, spatial_scale, sampling_ratio, roi_boxes):
    # Across the border, wholly outside below-right and above-left, a point, inverted.
    x = numpy.random.uniform(-1, 1, (2, 3, 6, 7))
    rois = roi_boxes.HALF_ROIS / spatial_scale
    indices = roi_boxes.HALF_INDICES
    y = align(kind, x, rois, indices, outsize, spatial_scale, sampling_ratio)
    expected = reference(kind, x, rois, indices, outsize, spatial_scale, sampling_ratio)
    testing.assert_allclose(y.array, expected, atol=1e-15, rtol=1e-12)


def test_average_sample_points_are_computed_in_chainers_order():
    # Bin 0 of [-3, 1.8) in 2 bins of 2.4, 3 points: the last is at -3 + 2.5 * 2.4 / 3,
    # exactly -1 (still read, from row 0); 2.5 * (2.4 / 3) would give -1.0000000000000002,
    # more than a pixel out. The first two points (-2.6, -1.8) are outside.
    x = numpy.arange(6.0).reshape(1, 1, 3, 2)
    rois = numpy.array([[-3.0, 0.0, 1.8, 1.0]])
    y = roi_average_align_2d(x, rois, numpy.array([0], numpy.int32), (2, 1), 1.0, (3, 1))
    assert y.array[0, 0, 0, 0] == (x[0, 0, 0, 0] + x[0, 0, 0, 1]) / 2 / 3
    expected = reference("average", x, rois, [0], (2, 1), 1.0, (3, 1))
    testing.assert_allclose(y.array, expected, atol=0, rtol=1e-12)


@pytest.mark.parametrize("kind", list(KINDS))
def test_regions_are_not_differentiated_and_accept_variables(kind):
    x = Variable(numpy.random.uniform(-1, 1, (1, 2, 4, 5)).astype(numpy.float32))
    rois = Variable(numpy.array([[0.5, 0.5, 3.5, 4.5]], numpy.float32))
    y = align(kind, x, rois, Variable(numpy.array([0], numpy.int64)), (2, 3), 1.0)
    assert y.shape == (1, 2, 2, 3) and y.dtype == numpy.float32
    y.grad = numpy.ones(y.shape, numpy.float32)
    y.backward()
    assert x.grad.shape == x.shape and rois.grad is None


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_regions(kind):
    x = Variable(numpy.ones((2, 3, 4, 4), numpy.float16))
    y = align(kind, x, numpy.zeros((0, 4), numpy.float16), numpy.zeros(0, numpy.int32), 2, 1.0)
    assert y.shape == (0, 3, 2, 2) and y.dtype == numpy.float16
    y.grad = numpy.zeros(y.shape, numpy.float16)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros(x.shape))
