import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.roi_pooling_2d import roi_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# (batch_index, x_min, y_min, x_max, y_max): inside, over the border, wholly
# outside (every bin empty), a single pixel, inverted.
ROIS = numpy.array(
    [
        [0, 0.3, 1.2, 11.1, 9.7],
        [1, 6.4, -3.1, 16.9, 4.2],
        [1, 15.3, 14.2, 22.1, 19.4],
        [0, 2.2, 3.1, 2.4, 3.3],
        [1, 9.1, 8.3, 1.4, 2.2],
        [0, 0.0, 0.0, 10.0, 9.0],
    ]
)


def distinct(shape, dtype):
    """Well-separated values in random order, so that no bin has a near tie."""
    values = numpy.random.permutation(numpy.prod(shape)) * (2.0 / numpy.prod(shape)) - 1.0
    return numpy.asarray(values.reshape(shape)).astype(dtype)


def reference(x, rois, outh, outw, spatial_scale, boxes):
    """Loop-based Fast R-CNN ROI pooling: inclusive ends, each bin's maximum, 0 when empty.

    ``rois`` rows are ``(batch_index, x_min, y_min, x_max, y_max)``; ``boxes``
    is the ``roi_boxes`` fixture.
    """
    corners, indices = rois[:, [2, 1, 4, 3]], rois[:, 0].astype(int)
    return boxes.pooling_reference(
        x, corners, indices, (outh, outw), spatial_scale, numpy.max, inclusive=True
    )


@testing.parameterize(
    *testing.product(
        {
            "outh,outw,spatial_scale": [(2, 2, 0.6), (3, 4, 0.5), (1, 2, 1.0), (4, 3, 0.55)],
            "dtype": FLOATS,
        }
    )
)
class TestROIPooling2D(FunctionTestCase):
    check_backward_options = {"no_grads": [False, True]}
    check_double_backward_options = {"no_grads": [False, True]}

    @pytest.fixture(autouse=True)
    def _boxes(self, roi_boxes):
        self.boxes = roi_boxes

    def generate_inputs(self):
        x = distinct((2, 3, 6, 7), self.dtype)
        return x, ROIS.astype(self.dtype)

    def generate_grad_grad_inputs(self, inputs_template):
        x = inputs_template[0]
        return numpy.random.uniform(-1, 1, x.shape).astype(x.dtype), None

    def forward(self, inputs, device):
        x, rois = inputs
        return (roi_pooling_2d(x, rois, self.outh, self.outw, self.spatial_scale),)

    def forward_expected(self, inputs):
        x, rois = inputs
        y = reference(x, rois, self.outh, self.outw, self.spatial_scale, self.boxes)
        return (y.astype(self.dtype),)


def test_ends_are_inclusive():
    x = numpy.arange(16, dtype=numpy.float32).reshape(1, 1, 4, 4)
    rois = numpy.array([[0, 0, 0, 1, 1], [0, 2, 2, 2, 2]], numpy.float32)
    y = roi_pooling_2d(x, rois, 2, 2, 1.0)
    numpy.testing.assert_array_equal(y.array[0, 0], [[0.0, 1.0], [4.0, 5.0]])
    numpy.testing.assert_array_equal(y.array[1, 0], numpy.full((2, 2), 10.0))


def test_gradient_goes_to_the_first_maximum_and_skips_empty_bins():
    x = Variable(numpy.array([[[[1.0, 3.0, 3.0], [0.0, 2.0, 1.0]]]], numpy.float32))
    rois = numpy.array([[0, 0, 0, 2, 1], [0, 5, 5, 9, 9]], numpy.float32)
    y = roi_pooling_2d(x, rois, 1, 1, 1.0)
    numpy.testing.assert_array_equal(y.array, [[[[3.0]]], [[[0.0]]]])
    y.grad = numpy.array([[[[5.0]]], [[[7.0]]]], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]]]])


def test_corners_round_half_to_even():
    x = Variable(numpy.arange(36, dtype=numpy.float32).reshape(1, 1, 6, 6))
    # 0.5 rounds to 0 and 2.5 to 2: rows and columns 0 to 2 inclusive.
    rois = numpy.array([[0, 0.5, 0.5, 2.5, 2.5]], numpy.float32)
    y = roi_pooling_2d(x, rois, 1, 1, 1.0)
    assert y.array[0, 0, 0, 0] == 14.0
    y = roi_pooling_2d(x, rois, 3, 3, 1.0)
    numpy.testing.assert_array_equal(y.array[0, 0], x.array[0, 0, :3, :3])


@pytest.mark.parametrize("outh,outw", [(2, 3), (3, 2), (4, 4)])
@pytest.mark.parametrize("spatial_scale", [1.0, 0.5])
def test_half_pixel_and_outside_regions(outh, outw, spatial_scale, roi_boxes):
    # (batch_index, x_min, y_min, x_max, y_max) rows of the shared half-pixel boxes.
    x = distinct((2, 3, 6, 7), numpy.float64)
    corners = roi_boxes.HALF_ROIS[:, [1, 0, 3, 2]] / spatial_scale
    rois = numpy.column_stack([roi_boxes.HALF_INDICES, corners])
    y = roi_pooling_2d(x, rois, outh, outw, spatial_scale)
    expected = reference(x, rois, outh, outw, spatial_scale, roi_boxes)
    numpy.testing.assert_array_equal(y.array, expected)


def test_bin_edges_are_float64_products_as_in_chainer(roi_boxes):
    # 7 pixels (0 to 6 inclusive) in 25 bins: the last bin ends at
    # ceil(25 * (7 / 25)) == 8, so it reaches pixel 7.
    x = numpy.arange(100, dtype=numpy.float64).reshape(1, 1, 10, 10)
    rois = numpy.array([[0, 0.0, 0.0, 6.0, 6.0]])
    y = roi_pooling_2d(x, rois, 25, 25, 1.0)
    assert y.array[0, 0, 24, 24] == x[0, 0, 7, 7]
    numpy.testing.assert_array_equal(y.array, reference(x, rois, 25, 25, 1.0, roi_boxes))


def test_regions_are_not_differentiated_and_accept_variables():
    x = Variable(numpy.random.uniform(-1, 1, (2, 2, 4, 5)).astype(numpy.float32))
    rois = Variable(numpy.array([[1, 0.5, 0.5, 4.5, 3.5]], numpy.float32))
    y = roi_pooling_2d(x, rois, 2, 3, 1.0)
    assert y.shape == (1, 2, 2, 3) and y.dtype == numpy.float32
    y.grad = numpy.ones(y.shape, numpy.float32)
    y.backward()
    assert not x.grad[0].any() and x.grad[1].any() and rois.grad is None


def test_no_regions():
    x = Variable(numpy.ones((2, 3, 4, 4), numpy.float64))
    y = roi_pooling_2d(x, numpy.zeros((0, 5)), 2, 3, 1.0)
    assert y.shape == (0, 3, 2, 3)
    y.grad = numpy.zeros(y.shape)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros(x.shape))


_X = numpy.zeros((2, 1, 4, 4), numpy.float32)
_ROIS = numpy.zeros((1, 5), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((_X[0], _ROIS, 2, 2, 1.0), InvalidType, ("ROIPooling2D", "x.ndim == 4")),
        ((_X, _ROIS[:, :4], 2, 2, 1.0), InvalidType, ("ROIPooling2D", "rois.shape[1] == 5")),
        (
            (_X.astype(numpy.int32), _ROIS, 2, 2, 1.0),
            InvalidType,
            ("ROIPooling2D", "x.dtype.kind == 'f'"),
        ),
        (
            (_X, _ROIS.astype(numpy.int32), 2, 2, 1.0),
            InvalidType,
            ("ROIPooling2D", "rois.dtype.kind == 'f'"),
        ),
        ((_X, _ROIS, 0, 2, 1.0), ValueError, "roi_pooling_2d: expected outh > 0, got 0"),
        (
            (_X, _ROIS, 2, 2.0, 1.0),
            TypeError,
            "roi_pooling_2d: expected outw to be an int, got 2.0",
        ),
        (
            (_X, _ROIS, 2, 2, 0.0),
            ValueError,
            "expected spatial_scale to be finite and > 0, got 0.0",
        ),
        (
            (_X, numpy.array([[2, 0, 0, 1, 1]], numpy.float32), 2, 2, 1.0),
            ValueError,
            ("0 <= rois[:, 0] < x.shape[0] == 2", "got 2"),
        ),
    ],
    function=roi_pooling_2d,
)
