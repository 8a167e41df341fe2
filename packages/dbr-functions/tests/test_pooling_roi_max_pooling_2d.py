import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, backend, testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.array.where import where
from dbr.functions.pooling.roi_max_pooling_2d import roi_max_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def distinct(shape, dtype):
    """Well-separated values in random order, so that no bin has a near tie."""
    values = numpy.random.permutation(numpy.prod(shape)) * (2.0 / numpy.prod(shape)) - 1.0
    return numpy.asarray(values.reshape(shape)).astype(dtype)


def finite(y):
    """``y`` with its empty bins' -inf replaced by 0, for the numerical gradient checks."""
    xp = backend.get_array_module(y.array)
    return where(xp.isfinite(y.array), y, xp.zeros_like(y.array))


def reference(x, rois, roi_indices, outsize, spatial_scale, boxes):
    """Loop-based ROI max pooling: each bin's maximum, -inf for an empty bin (as Chainer).

    ``boxes`` is the ``roi_boxes`` fixture.
    """
    return boxes.pooling_reference(
        x, rois, roi_indices, outsize, spatial_scale, numpy.max, empty=-numpy.inf
    )


@testing.parameterize(
    *testing.product(
        {
            "outsize,spatial_scale": [(2, 0.6), ((3, 4), 0.5), ((1, 2), 1.0), (4, 0.55)],
            "dtype": FLOATS,
        }
    )
)
class TestROIMaxPooling2D(families.ROIPoolingCase):
    draw = staticmethod(distinct)

    def forward(self, inputs, device):
        x, rois, roi_indices = inputs
        y = roi_max_pooling_2d(x, rois, roi_indices, self.outsize, self.spatial_scale)
        return (finite(y),)

    def forward_expected(self, inputs):
        x, rois, roi_indices = inputs
        y = reference(x, rois, roi_indices, self.outsize, self.spatial_scale, self.boxes)
        return (numpy.where(numpy.isfinite(y), y, 0).astype(self.dtype),)


def test_gradient_goes_to_the_first_maximum_and_skips_empty_bins():
    x = Variable(numpy.array([[[[1.0, 3.0, 3.0], [0.0, 2.0, 1.0]]]], numpy.float32))
    rois = numpy.array([[0.0, 0.0, 2.0, 3.0], [5.0, 5.0, 9.0, 9.0]], numpy.float32)
    y = roi_max_pooling_2d(x, rois, numpy.array([0, 0], numpy.int32), 1, 1.0)
    numpy.testing.assert_array_equal(y.array, [[[[3.0]]], [[[-numpy.inf]]]])
    y.grad = numpy.array([[[[5.0]]], [[[7.0]]]], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]]]])


def test_overlapping_bins_and_regions_add_their_gradients():
    x = Variable(numpy.arange(9, dtype=numpy.float64).reshape(1, 1, 3, 3))
    rois = numpy.array([[0.0, 0.0, 3.0, 3.0], [1.0, 1.0, 3.0, 3.0]])
    y = roi_max_pooling_2d(x, rois, numpy.array([0, 0], numpy.int32), 2, 1.0)
    # Three rows split in two bins share the middle row: [0, 2) and [1, 3).
    numpy.testing.assert_array_equal(y.array[0, 0], [[4.0, 5.0], [7.0, 8.0]])
    y.grad = numpy.ones(y.shape)
    y.backward()
    expected = numpy.zeros((3, 3))
    expected[1, 1] = 1 + 1
    expected[1, 2] = 1 + 1
    expected[2, 1] = 1 + 1
    expected[2, 2] = 1 + 1
    numpy.testing.assert_array_equal(x.grad[0, 0], expected)


def test_corners_round_half_to_even():
    x = Variable(numpy.arange(36, dtype=numpy.float32).reshape(1, 1, 6, 6))
    # 0.5 rounds to 0 and 2.5 to 2 (halves away from zero would give rows 1 and 2).
    rois = numpy.array([[0.5, 0.5, 2.5, 2.5]], numpy.float32)
    y = roi_max_pooling_2d(x, rois, numpy.array([0], numpy.int32), 1, 1.0)
    assert y.array[0, 0, 0, 0] == 7.0
    y.grad = numpy.ones_like(y.array)  # a one-element non-scalar is not seeded silently
    y.backward()
    assert x.grad[0, 0, 1, 1] == 1.0 and x.grad.sum() == 1.0


@pytest.mark.parametrize("outsize", [(2, 3), (3, 2), 4])
@pytest.mark.parametrize("spatial_scale", [1.0, 0.5])
def test_half_pixel_and_outside_regions(outsize, spatial_scale, roi_boxes):
    x = Variable(distinct((2, 3, 6, 7), numpy.float64))
    rois = roi_boxes.HALF_ROIS / spatial_scale
    indices = roi_boxes.HALF_INDICES
    y = roi_max_pooling_2d(x, rois, indices, outsize, spatial_scale)
    expected = reference(x.array, rois, indices, outsize, spatial_scale, roi_boxes)
    numpy.testing.assert_array_equal(y.array, expected)
    # Each finite output's gradient lands on the pixel holding its value.
    y.grad = numpy.isfinite(y.array) * 1.0
    y.backward()
    assert x.grad.sum() == numpy.isfinite(expected).sum()
    assert set(x.array[x.grad != 0]) == set(expected[numpy.isfinite(expected)])


def test_bin_edges_are_float64_products_as_in_chainer(roi_boxes):
    # 7 pixels in 25 bins: the last bin ends at ceil(25 * (7 / 25)) == 8, not 7.
    x = numpy.arange(100, dtype=numpy.float64).reshape(1, 1, 10, 10)
    rois = numpy.array([[0.0, 0.0, 7.0, 7.0]])
    y = roi_max_pooling_2d(x, rois, numpy.array([0], numpy.int32), 25, 1.0)
    assert y.array[0, 0, 24, 24] == x[0, 0, 7, 7]
    assert y.array[0, 0, 23, 23] == x[0, 0, 6, 6]
    numpy.testing.assert_array_equal(y.array, reference(x, rois, [0], 25, 1.0, roi_boxes))


def test_regions_are_not_differentiated_and_accept_variables():
    x = Variable(numpy.random.uniform(-1, 1, (1, 2, 4, 5)).astype(numpy.float32))
    rois = Variable(numpy.array([[0.5, 0.5, 3.5, 4.5]], numpy.float32))
    roi_indices = Variable(numpy.array([0], numpy.int32))
    y = roi_max_pooling_2d(x, rois, roi_indices, (2, 3), 1.0)
    assert y.shape == (1, 2, 2, 3) and y.dtype == numpy.float32
    y.grad = numpy.ones(y.shape, numpy.float32)
    y.backward()
    assert x.grad.shape == x.shape and rois.grad is None


def test_only_the_regions_require_grad():
    x = numpy.random.uniform(-1, 1, (1, 2, 4, 5)).astype(numpy.float32)
    rois = Variable(numpy.array([[0.5, 0.5, 3.5, 4.5]], numpy.float32))
    y = roi_max_pooling_2d(x, rois, numpy.array([0], numpy.int32), 2, 1.0)
    y.grad = numpy.ones(y.shape, numpy.float32)
    y.backward()
    assert rois.grad is None


def test_float16_maps_with_float32_regions(roi_boxes):
    x = distinct((1, 2, 5, 5), numpy.float16)
    rois = numpy.array([[0.4, 1.2, 4.6, 3.9]], numpy.float32)
    y = roi_max_pooling_2d(x, rois, numpy.array([0]), 2, 1.0)
    assert y.dtype == numpy.float16
    expected = reference(x, rois, [0], 2, 1.0, roi_boxes)
    numpy.testing.assert_array_equal(y.array, expected.astype(numpy.float16))


def test_no_regions():
    x = Variable(numpy.ones((2, 3, 4, 4), numpy.float32))
    y = roi_max_pooling_2d(
        x, numpy.zeros((0, 4), numpy.float32), numpy.zeros(0, numpy.int32), (2, 3), 1.0
    )
    assert y.shape == (0, 3, 2, 3)
    y.grad = numpy.zeros(y.shape, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros(x.shape))


_X = numpy.zeros((1, 1, 4, 4), numpy.float32)
_X_2 = numpy.zeros((2, 1, 4, 4), numpy.float32)
_ROIS = numpy.zeros((1, 4), numpy.float32)
_INDEX = numpy.zeros(1, numpy.int32)

test_bad_input = bad_input_test(
    [
        (
            (
                numpy.zeros(x, numpy.float32),
                numpy.zeros(rois, numpy.float32),
                numpy.zeros(roi_indices, numpy.int32),
                2,
                1.0,
            ),
            InvalidType,
            ("ROIMaxPooling2D", condition),
        )
        for x, rois, roi_indices, condition in [
            ((2, 3, 4), (1, 4), (1,), "x.ndim == 4"),
            ((1, 1, 4, 4), (1, 5), (1,), "rois.shape[1] == 4"),
            ((1, 1, 4, 4), (2, 4), (1,), "roi_indices.shape[0] == rois.shape[0]"),
            ((1, 1, 4, 4), (4,), (1,), "rois.ndim == 2"),
            ((1, 1, 4, 4), (1, 4), (1, 1), "roi_indices.ndim == 1"),
        ]
    ]
    + [
        ((*args, 2, 1.0), InvalidType, ("ROIMaxPooling2D", condition))
        for args, condition in [
            ((_X.astype(numpy.int32), _ROIS, _INDEX), "x.dtype.kind == 'f'"),
            ((_X, _ROIS.astype(numpy.int32), _INDEX), "rois.dtype.kind == 'f'"),
            ((_X, _ROIS, _INDEX.astype(numpy.float32)), "roi_indices.dtype.kind == 'i'"),
        ]
    ]
    + [
        (
            (_X_2, _ROIS, _INDEX, (2, 0), 1.0),
            ValueError,
            "roi_max_pooling_2d: expected outsize to be positive",
        ),
        (
            (_X_2, _ROIS, _INDEX, 2.0, 1.0),
            TypeError,
            "roi_max_pooling_2d: expected outsize to be an int or",
        ),
        (
            (_X_2, _ROIS, _INDEX, (1, 2, 3), 1.0),
            TypeError,
            "expected outsize to be an int or a pair of ints",
        ),
        (
            (_X_2, _ROIS, _INDEX, 2, -1.0),
            ValueError,
            "expected spatial_scale to be finite and > 0, got -1",
        ),
        (
            (_X_2, _ROIS, _INDEX, 2, "1"),
            TypeError,
            "expected spatial_scale to be a float, got '1'",
        ),
        (
            (_X_2, _ROIS, numpy.array([2], numpy.int32), 2, 1.0),
            ValueError,
            ("0 <= roi_indices < x.shape[0] == 2", "got 2"),
        ),
        ((_X_2, _ROIS, numpy.array([-1], numpy.int32), 2, 1.0), ValueError, "got -1"),
    ],
    function=roi_max_pooling_2d,
)
