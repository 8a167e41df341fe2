import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.array.spatial_transformer_grid import spatial_transformer_grid

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _grid_reference(theta, height, width):
    theta = theta.astype(numpy.float64)
    grid = numpy.empty((theta.shape[0], 2, height, width))
    for n, i, j in numpy.ndindex(theta.shape[0], height, width):
        x_t = -1 + 2 * j / (width - 1) if width > 1 else -1.0
        y_t = -1 + 2 * i / (height - 1) if height > 1 else -1.0
        grid[n, :, i, j] = theta[n] @ numpy.array([x_t, y_t, 1.0])
    return grid


@testing.parameterize(
    *testing.product(
        {
            "n,output_shape": [(2, (3, 4)), (1, (5, 5)), (3, (1, 3)), (2, (4, 1)), (0, (2, 2))],
            "dtype": FLOATS,
        }
    )
)
class TestSpatialTransformerGrid(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (self.n, 2, 3)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (spatial_transformer_grid(inputs[0], self.output_shape),)

    def forward_expected(self, inputs):
        return (_grid_reference(inputs[0], *self.output_shape).astype(self.dtype),)


def test_identity_transform_gives_the_target_coordinates():
    theta = numpy.array([[[1, 0, 0], [0, 1, 0]]], numpy.float32)
    grid = spatial_transformer_grid(theta, (2, 3)).array
    testing.assert_allclose(grid[0, 0], [[-1, 0, 1], [-1, 0, 1]], atol=0, rtol=0)
    testing.assert_allclose(grid[0, 1], [[-1, -1, -1], [1, 1, 1]], atol=0, rtol=0)


_THETA = numpy.zeros((1, 2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3, 3), numpy.float32), (2, 2)),
            InvalidType,
            ("SpatialTransformerGrid", "theta.shape[1] == 2"),
        ),
        ((numpy.zeros((2, 2, 2), numpy.float32), (2, 2)), InvalidType, "theta.shape[2] == 3"),
        ((numpy.zeros((2, 3), numpy.float32), (2, 2)), InvalidType, "theta.ndim == 3"),
        (
            (numpy.zeros((1, 2, 3), numpy.int32), (2, 2)),
            InvalidType,
            "theta.dtype.kind == 'f'",
        ),
        ((_THETA, (2, 2, 2)), TypeError, "spatial_transformer_grid: expected output_shape"),
        ((_THETA, (0, 2)), ValueError, "spatial_transformer_grid: expected a positive"),
        (
            (_THETA, (2, 2)),
            {"use_cudnn": False},
            ValueError,
            "use_cudnn is not supported anymore",
        ),
        ((_THETA, (2, 2)), {"foo": 1}, TypeError, "unexpected keyword arguments: foo"),
    ],
    function=spatial_transformer_grid,
)
