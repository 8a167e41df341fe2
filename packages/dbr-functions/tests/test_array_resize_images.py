import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.array.resize_images import resize_images

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _source(i, in_size, out_size, mode, align_corners):
    """The (fractional) input coordinate output pixel ``i`` samples."""
    if mode == "nearest":
        return float(min(int(numpy.floor(i * in_size / out_size)), in_size - 1))
    if align_corners:
        return i * (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return max((i + 0.5) * in_size / out_size - 0.5, 0.0)


def _resize_reference(x, out_h, out_w, mode, align_corners):
    n, c, h, w = x.shape
    x = x.astype(numpy.float64)
    y = numpy.empty((n, c, out_h, out_w))
    for i, j in numpy.ndindex(out_h, out_w):
        v = _source(i, h, out_h, mode, align_corners)
        u = _source(j, w, out_w, mode, align_corners)
        v0, u0 = int(numpy.floor(v)), int(numpy.floor(u))
        v1, u1 = min(v0 + 1, h - 1), min(u0 + 1, w - 1)
        dv, du = v - v0, u - u0
        y[:, :, i, j] = (
            (1 - dv) * (1 - du) * x[:, :, v0, u0]
            + (1 - dv) * du * x[:, :, v0, u1]
            + dv * (1 - du) * x[:, :, v1, u0]
            + dv * du * x[:, :, v1, u1]
        )
    return y


@testing.parameterize(
    *testing.product(
        {
            "in_shape,output_shape": [
                ((2, 3, 4, 5), (7, 3)),
                ((1, 2, 3, 3), (3, 3)),
                ((2, 1, 5, 4), (2, 9)),
                ((1, 2, 1, 3), (4, 1)),
                ((0, 2, 3, 3), (2, 2)),
            ],
            "mode,align_corners": [
                ("bilinear", True),
                ("bilinear", False),
                ("nearest", True),
                ("nearest", False),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestResizeImages(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.in_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (
            resize_images(
                inputs[0], self.output_shape, mode=self.mode, align_corners=self.align_corners
            ),
        )

    def forward_expected(self, inputs):
        y = _resize_reference(inputs[0], *self.output_shape, self.mode, self.align_corners)
        return (y.astype(self.dtype),)


def test_align_corners_keeps_the_corner_pixels():
    x = numpy.random.uniform(-1, 1, (1, 1, 3, 4)).astype(numpy.float32)
    y = resize_images(x, (7, 9)).array
    for (i, j), (p, q) in zip([(0, 0), (0, 8), (6, 0), (6, 8)], [(0, 0), (0, 3), (2, 0), (2, 3)]):
        testing.assert_allclose(y[0, 0, i, j], x[0, 0, p, q], atol=1e-6, rtol=0)


def test_gradient_of_a_downsampling_sums_the_contributions():
    x = Variable(numpy.zeros((1, 1, 1, 4)))
    y = resize_images(x, (1, 2), mode="nearest")
    y.grad = numpy.array([[[[1.0, 10.0]]]])
    y.backward()
    testing.assert_allclose(x.grad, [[[[1.0, 0.0, 10.0, 0.0]]]], atol=0, rtol=0)


_RESIZE_X = numpy.zeros((1, 1, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((1, 2, 2), numpy.float32), (3, 3)),
            InvalidType,
            ("ResizeImages", "x.ndim == 4"),
        ),
        ((numpy.zeros((1, 1, 2, 2), numpy.int32), (3, 3)), InvalidType, "x.dtype.kind == 'f'"),
        ((numpy.zeros((1, 1, 0, 2), numpy.float32), (3, 3)), InvalidType, "x.shape[2] > 0"),
        (
            (_RESIZE_X, (3, 3)),
            {"mode": "bicubic"},
            ValueError,
            "resize_images: expected mode to be one of",
        ),
        (
            (_RESIZE_X, (3, 3)),
            {"align_corners": "yes"},
            TypeError,
            "resize_images: expected align_corners to be a bool",
        ),
        ((_RESIZE_X, 3), TypeError, "resize_images: expected output_shape to be two ints"),
        ((_RESIZE_X, (3, 0)), ValueError, "resize_images: expected a positive output_shape"),
        # mode is keyword-only.
        ((_RESIZE_X, (3, 3), "nearest"), TypeError, ("resize_images()", "positional")),
    ],
    function=resize_images,
)
