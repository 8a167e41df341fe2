import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.spatial_transformer_grid import spatial_transformer_grid
from dbr.functions.array.spatial_transformer_sampler import spatial_transformer_sampler

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _sampler_reference(x, grid):
    # Chainer's formulation: a one-pixel zero border, coordinates clipped onto it.
    x = x.astype(numpy.float64)
    grid = grid.astype(numpy.float64)
    n, c, h, w = x.shape
    padded = numpy.zeros((n, c, h + 2, w + 2))
    padded[:, :, 1:-1, 1:-1] = x
    out_h, out_w = grid.shape[2:]
    y = numpy.zeros((n, c, out_h, out_w))
    for b, i, j in numpy.ndindex(n, out_h, out_w):
        u = min(max((grid[b, 0, i, j] + 1) * (w - 1) / 2 + 1, 0.0), w + 1.0)
        v = min(max((grid[b, 1, i, j] + 1) * (h - 1) / 2 + 1, 0.0), h + 1.0)
        u0 = min(int(numpy.floor(u)), w)
        v0 = min(int(numpy.floor(v)), h)
        du, dv = u - u0, v - v0
        y[b, :, i, j] = (
            (1 - du) * (1 - dv) * padded[b, :, v0, u0]
            + du * (1 - dv) * padded[b, :, v0, u0 + 1]
            + (1 - du) * dv * padded[b, :, v0 + 1, u0]
            + du * dv * padded[b, :, v0 + 1, u0 + 1]
        )
    return y


def _points(size, shape):
    """Grid coordinates whose pixel positions stay 0.1 away from integers and from -1, size."""
    pixel = numpy.random.randint(-1, size, shape) + numpy.random.uniform(0.1, 0.9, shape)
    far = numpy.random.uniform(0, 1, shape) < 0.1
    pixel[far] = numpy.random.choice([-3.5, size + 2.5], int(far.sum()))
    if size == 1:
        return numpy.random.uniform(-1, 1, shape)
    return pixel / ((size - 1) / 2) - 1


@testing.parameterize(
    *testing.product(
        {
            "x_shape,out_shape": [
                ((2, 3, 4, 5), (3, 4)),
                ((1, 2, 5, 3), (6, 2)),
                ((2, 1, 1, 4), (2, 3)),
                ((1, 2, 3, 3), (1, 1)),
                ((0, 2, 3, 3), (2, 2)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSpatialTransformerSampler(FunctionTestCase):
    def generate_inputs(self):
        n, _, h, w = self.x_shape
        x = numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype)
        grid = numpy.empty((n, 2) + self.out_shape)
        grid[:, 0] = _points(w, (n,) + self.out_shape)
        grid[:, 1] = _points(h, (n,) + self.out_shape)
        return x, grid.astype(self.dtype)

    def forward(self, inputs, device):
        return (spatial_transformer_sampler(*inputs),)

    def forward_expected(self, inputs):
        return (_sampler_reference(*inputs).astype(self.dtype),)

    function = staticmethod(spatial_transformer_sampler)

    def bad_inputs(self):
        x = numpy.zeros((2, 3, 4, 4), numpy.float32)
        grid = numpy.zeros((2, 2, 3, 3), numpy.float32)
        return [
            (
                (x, grid[:1]),
                InvalidType,
                ("SpatialTransformerSampler", "x.shape[0] == grid.shape[0]"),
            ),
            ((x, numpy.zeros((2, 3, 3, 3), numpy.float32)), InvalidType, "grid.shape[1] == 2"),
            ((x, grid.astype(numpy.float64)), InvalidType, "grid.dtype == x.dtype"),
            ((x[0], grid), InvalidType, "x.ndim == 4"),
            ((numpy.zeros((2, 3, 0, 4), numpy.float32), grid), InvalidType, "x.shape[2] > 0"),
            ((x, grid), {"use_cudnn": True}, ValueError, "use_cudnn is not supported anymore"),
            ((x, grid), {"bar": None}, TypeError, "unexpected keyword arguments: bar"),
        ]


def test_identity_grid_reproduces_the_image():
    x = numpy.random.uniform(-1, 1, (2, 3, 4, 5)).astype(numpy.float32)
    theta = numpy.tile(numpy.array([[1, 0, 0], [0, 1, 0]], numpy.float32), (2, 1, 1))
    grid = spatial_transformer_grid(theta, (4, 5))
    testing.assert_allclose(spatial_transformer_sampler(x, grid).array, x, atol=1e-6, rtol=1e-5)


def test_points_outside_read_zeros_and_pass_no_gradient_to_the_grid():
    x = Variable(numpy.ones((1, 1, 2, 2)))
    grid = Variable(numpy.array([[[[3.0, -4.0]], [[0.0, 0.0]]]]))
    y = spatial_transformer_sampler(x, grid)
    testing.assert_allclose(y.array, numpy.zeros((1, 1, 1, 2)), atol=0, rtol=0)
    y.grad = numpy.ones((1, 1, 1, 2))
    y.backward()
    testing.assert_allclose(grid.grad, numpy.zeros((1, 2, 1, 2)), atol=0, rtol=0)
    testing.assert_allclose(x.grad, numpy.zeros((1, 1, 2, 2)), atol=0, rtol=0)


def test_half_a_pixel_outside_blends_with_the_zero_border():
    x = numpy.ones((1, 1, 2, 2), numpy.float32)
    # u = -0.5: halfway between the zero border and the first column.
    grid = numpy.array([[[[-2.0]], [[-1.0]]]], numpy.float32)
    testing.assert_allclose(spatial_transformer_sampler(x, grid).array, 0.5, atol=1e-7, rtol=0)
