import math

import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.spatial_pyramid_pooling_2d import spatial_pyramid_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def distinct(shape, dtype):
    """Values without ties, 1.6 / size apart (finite differences never reorder them)."""
    size = int(numpy.prod(shape))
    values = (numpy.random.permutation(size) - size / 2) * (1.6 / max(size, 1))
    return values.reshape(shape).astype(dtype)


def bin_range(k, p, axis_len, index):
    start = index * k - p
    return max(start, 0), min(start + k, axis_len)


def spp_reference(x, height):
    """Each level: the maximum over bins of size ceil(h / 2^l) (stride = size, centred)."""
    n, c, h, w = x.shape
    levels = []
    for level in range(height):
        bins = 2**level
        kh, kw = math.ceil(h / bins), math.ceil(w / bins)
        ph, pw = (kh * bins - h) // 2, (kw * bins - w) // 2
        out_h = (h + 2 * ph - 1) // kh + 1
        out_w = (w + 2 * pw - 1) // kw + 1
        y = numpy.empty((n, c, out_h, out_w), x.dtype)
        for i in range(out_h):
            r0, r1 = bin_range(kh, ph, h, i)
            for j in range(out_w):
                q0, q1 = bin_range(kw, pw, w, j)
                y[:, :, i, j] = x[:, :, r0:r1, q0:q1].max(axis=(2, 3))
        levels.append(y.reshape(n, -1, 1, 1))
    return numpy.concatenate(levels, axis=1)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,height": [
                ((2, 3, 8, 8), 3),
                ((2, 2, 9, 7), 3),
                ((1, 2, 5, 6), 1),
                ((1, 3, 6, 5), 2),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSpatialPyramidPooling2D(FunctionTestCase):
    def generate_inputs(self):
        return (distinct(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (spatial_pyramid_pooling_2d(inputs[0], self.height, pooling="max"),)

    def forward_expected(self, inputs):
        return (spp_reference(inputs[0], self.height),)


def test_output_length_does_not_depend_on_the_input_size():
    for shape in [(2, 3, 8, 8), (2, 3, 13, 9), (2, 3, 16, 30)]:
        y = spatial_pyramid_pooling_2d(numpy.ones(shape, numpy.float32), 3, pooling="max")
        assert y.shape == (2, 3 * (1 + 4 + 16), 1, 1)


def test_a_one_element_bin_with_an_odd_remainder_loses_a_bin_as_in_chainer():
    y = spatial_pyramid_pooling_2d(numpy.ones((1, 1, 3, 4), numpy.float32), 3, pooling="max")
    assert y.shape == (1, 1 + 4 + 3 * 4, 1, 1)


def test_gradient_goes_to_each_levels_maxima():
    x = Variable(numpy.arange(16.0).reshape(1, 1, 4, 4))
    y = spatial_pyramid_pooling_2d(x, 2, pooling="max")
    y.grad = numpy.ones(y.shape)
    y.backward()
    expected = numpy.zeros((4, 4))
    expected[1, 1] = expected[1, 3] = expected[3, 1] = 1.0
    expected[3, 3] = 2.0
    numpy.testing.assert_array_equal(x.grad[0, 0], expected)


X = numpy.ones((1, 1, 4, 4), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (X, 2),
            {"pooling": pooling},
            ValueError,
            ("spatial_pyramid_pooling_2d", "pooling", repr(pooling)),
        )
        for pooling in [None, "average", "avg"]
    ]
    + [
        ((X, height, "max"), error, ("spatial_pyramid_pooling_2d", "pyramid_height"))
        for height, error in [(0, ValueError), (-1, ValueError), (1.5, TypeError)]
    ]
    + [
        (
            (numpy.ones((1, 4, 4), numpy.float32), 2, "max"),
            InvalidType,
            ("spatial_pyramid_pooling_2d", "x.ndim == 4"),
        ),
        ((numpy.ones((1, 1, 4, 4), numpy.int32), 2, "max"), InvalidType, "x.dtype.kind == 'f'"),
    ],
    function=spatial_pyramid_pooling_2d,
)
