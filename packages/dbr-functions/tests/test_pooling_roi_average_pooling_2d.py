import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.roi_average_pooling_2d import roi_average_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def reference(x, rois, roi_indices, outsize, spatial_scale, boxes):
    """Loop-based ROI average pooling: each bin's mean, 0 for an empty bin.

    ``boxes`` is the ``roi_boxes`` fixture.
    """
    return boxes.pooling_reference(x, rois, roi_indices, outsize, spatial_scale, numpy.mean)


@testing.parameterize(
    *testing.product(
        {
            "outsize,spatial_scale": [(2, 0.6), ((3, 4), 0.5), ((1, 2), 1.0), (4, 0.55)],
            "dtype": FLOATS,
        }
    )
)
class TestROIAveragePooling2D(families.ROIPoolingCase):
    def forward(self, inputs, device):
        x, rois, roi_indices = inputs
        return (roi_average_pooling_2d(x, rois, roi_indices, self.outsize, self.spatial_scale),)

    def forward_expected(self, inputs):
        x, rois, roi_indices = inputs
        y = reference(x, rois, roi_indices, self.outsize, self.spatial_scale, self.boxes)
        return (y.astype(self.dtype),)


def test_gradient_spreads_evenly_over_each_bin():
    x = Variable(numpy.zeros((1, 1, 3, 4)))
    rois = numpy.array([[0.0, 0.0, 3.0, 4.0], [7.0, 7.0, 9.0, 9.0]])
    y = roi_average_pooling_2d(x, rois, numpy.array([0, 0], numpy.int32), (1, 2), 1.0)
    y.grad = numpy.array([[[[6.0, 12.0]]], [[[5.0, 5.0]]]])
    y.backward()
    numpy.testing.assert_array_equal(x.grad[0, 0], [[1.0, 1.0, 2.0, 2.0]] * 3)


def test_corners_round_half_to_even():
    x = Variable(numpy.arange(36, dtype=numpy.float64).reshape(1, 1, 6, 6))
    # 0.5 rounds to 0 and 2.5 to 2: rows and columns 0 and 1.
    rois = numpy.array([[0.5, 0.5, 2.5, 2.5]])
    y = roi_average_pooling_2d(x, rois, numpy.array([0], numpy.int32), 1, 1.0)
    assert y.array[0, 0, 0, 0] == (0 + 1 + 6 + 7) / 4
    y.grad = numpy.ones_like(y.array)  # a one-element non-scalar is not seeded silently
    y.backward()
    numpy.testing.assert_array_equal(x.grad[0, 0, :2, :2], numpy.full((2, 2), 0.25))
    assert x.grad.sum() == 1.0


@pytest.mark.parametrize("outsize", [(2, 3), (3, 2), 4])
@pytest.mark.parametrize("spatial_scale", [1.0, 0.5])
def test_half_pixel_and_outside_regions(outsize, spatial_scale, roi_boxes):
    x = numpy.random.uniform(-1, 1, (2, 3, 6, 7))
    rois = roi_boxes.HALF_ROIS / spatial_scale
    indices = roi_boxes.HALF_INDICES
    y = roi_average_pooling_2d(x, rois, indices, outsize, spatial_scale)
    expected = reference(x, rois, indices, outsize, spatial_scale, roi_boxes)
    testing.assert_allclose(y.array, expected, atol=1e-15, rtol=1e-12)


def test_bin_edges_are_float64_products_as_in_chainer(roi_boxes):
    # 7 pixels in 25 bins: the last bin ends at ceil(25 * (7 / 25)) == 8, not 7.
    x = numpy.arange(100, dtype=numpy.float64).reshape(1, 1, 10, 10)
    rois = numpy.array([[0.0, 0.0, 7.0, 7.0]])
    y = roi_average_pooling_2d(x, rois, numpy.array([0], numpy.int32), 25, 1.0)
    assert y.array[0, 0, 24, 24] == x[0, 0, 6:8, 6:8].mean()
    expected = reference(x, rois, [0], 25, 1.0, roi_boxes)
    testing.assert_allclose(y.array, expected, atol=0, rtol=1e-14)


def test_float16_accumulates_in_float32():
    x = numpy.full((1, 1, 64, 64), 1.0009765625, numpy.float16)
    x[0, 0, 0, 0] = 8.0
    rois = numpy.array([[0.0, 0.0, 64.0, 64.0]], numpy.float32)
    y = roi_average_pooling_2d(x, rois, numpy.array([0], numpy.int32), 1, 1.0)
    expected = (x.astype(numpy.float64).sum() / x.size).astype(numpy.float16)
    assert y.dtype == numpy.float16 and y.array[0, 0, 0, 0] == expected


def test_no_regions():
    x = Variable(numpy.ones((2, 3, 4, 4), numpy.float32))
    y = roi_average_pooling_2d(
        x, numpy.zeros((0, 4), numpy.float32), numpy.zeros(0, numpy.int32), 2, 1.0
    )
    assert y.shape == (0, 3, 2, 2)
    y.grad = numpy.zeros(y.shape, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros(x.shape))


_X = numpy.zeros((2, 1, 4, 4), numpy.float32)
_ROIS = numpy.zeros((1, 4), numpy.float32)
_INDEX = numpy.zeros(1, numpy.int32)

test_bad_input = bad_input_test(
    [
        ((_X[0], _ROIS, _INDEX, 2, 1.0), InvalidType, ("ROIAveragePooling2D", "x.ndim == 4")),
        (
            (_X, _ROIS[:, :3], _INDEX, 2, 1.0),
            InvalidType,
            ("ROIAveragePooling2D", "rois.shape[1] == 4"),
        ),
        (
            (_X, _ROIS, _INDEX.astype(numpy.float32), 2, 1.0),
            InvalidType,
            ("ROIAveragePooling2D", "roi_indices.dtype.kind == 'i'"),
        ),
        (
            (_X, _ROIS, numpy.zeros(2, numpy.int32), 2, 1.0),
            InvalidType,
            ("ROIAveragePooling2D", "roi_indices.shape[0] == rois.shape[0]"),
        ),
        (
            (_X, _ROIS, _INDEX, 0, 1.0),
            ValueError,
            "roi_average_pooling_2d: expected outsize to be pos",
        ),
        (
            (_X, _ROIS, _INDEX, 2, None),
            TypeError,
            "roi_average_pooling_2d: expected spatial_scale to be",
        ),
        (
            (_X, _ROIS, numpy.array([5], numpy.int32), 2, 1.0),
            ValueError,
            ("0 <= roi_indices < x.shape[0] == 2", "got 5"),
        ),
    ],
    function=roi_average_pooling_2d,
)
