import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.decorrelated_batch_normalization import (
    decorrelated_batch_normalization,
    fixed_decorrelated_batch_normalization,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

SHAPES = [((10, 6, 2), 2), ((8, 3), 1), ((4, 4, 2, 3), 2), ((6, 4, 3), 4), ((5, 2, 3), 1)]


def group_matrices(x, groups):
    """x (N, groups * C, ...) as a list of (C, m) matrices, samples in (n, spatial) order."""
    n, channels = x.shape[:2]
    size = channels // groups
    return [
        numpy.moveaxis(x[:, g * size : (g + 1) * size], 1, 0).reshape(size, -1)
        for g in range(groups)
    ]


def ungroup(mats, shape):
    n, channels = shape[:2]
    y = numpy.empty(shape)
    size = channels // len(mats)
    for g, mat in enumerate(mats):
        block = mat.reshape((size, n) + tuple(shape[2:]))
        y[:, g * size : (g + 1) * size] = numpy.moveaxis(block, 0, 1)
    return y


def zca(x, groups, eps):
    """The reference: ZCA whitening of each group in float64, with its means and projections."""
    ys, means, projections = [], [], []
    for mat in group_matrices(x.astype(numpy.float64), groups):
        mean = mat.mean(axis=1, keepdims=True)
        centred = mat - mean
        cov = centred @ centred.T / mat.shape[1] + eps * numpy.eye(mat.shape[0])
        w, v = numpy.linalg.eigh(cov)
        projection = v @ numpy.diag(w**-0.5) @ v.T
        ys.append(projection @ centred)
        means.append(mean[:, 0])
        projections.append(projection)
    return ungroup(ys, x.shape), numpy.stack(means), numpy.stack(projections)


@testing.parameterize(
    *testing.product({"shape,groups": SHAPES, "dtype": FLOATS, "eps": [2e-5, 0.1]})
)
class TestDecorrelatedBatchNormalization(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        y = decorrelated_batch_normalization(inputs[0], groups=self.groups, eps=self.eps)
        return (y,)

    def forward_expected(self, inputs):
        return (zca(inputs[0], self.groups, self.eps)[0].astype(self.dtype),)


def test_output_is_white():
    numpy.random.seed(0)
    mixing = numpy.array([[2.0, 0.5, 0.0], [0.3, 1.0, 0.2], [0.0, 0.4, 3.0]])
    x = (numpy.random.standard_normal((200, 3)) @ mixing.T + [1.0, -2.0, 0.5]).astype(
        numpy.float32
    )
    y = decorrelated_batch_normalization(x, groups=1, eps=0.0).array.astype(numpy.float64)
    testing.assert_allclose(y.mean(axis=0), 0.0, atol=1e-5)
    testing.assert_allclose(y.T @ y / 200, numpy.eye(3), atol=1e-4)


def test_running_statistics_are_updated_in_place():
    numpy.random.seed(1)
    x = numpy.random.uniform(-1, 1, (6, 4, 3)).astype(numpy.float32)
    running_mean = numpy.random.uniform(-1, 1, (2, 2)).astype(numpy.float32)
    running_projection = numpy.random.uniform(-1, 1, (2, 2, 2)).astype(numpy.float32)
    before_mean, before_projection = running_mean.copy(), running_projection.copy()
    decorrelated_batch_normalization(
        x,
        groups=2,
        eps=1e-3,
        running_mean=running_mean,
        running_projection=running_projection,
        decay=0.8,
    )
    _, mean, projection = zca(x, 2, 1e-3)
    m = 6 * 3
    testing.assert_allclose(running_mean, 0.8 * before_mean + 0.2 * mean, atol=1e-6, rtol=1e-5)
    expected = 0.8 * before_projection + 0.2 * m / (m - 1) * projection
    testing.assert_allclose(running_projection, expected, atol=1e-5, rtol=1e-4)


def test_the_gradient_whitens_like_the_reference():
    """Gradients against central differences of the float64 reference itself."""
    numpy.random.seed(2)
    x = numpy.random.uniform(-1, 1, (7, 2, 2))
    gy = numpy.random.uniform(-1, 1, x.shape)
    xv = Variable(x)
    (gx,) = grad([decorrelated_batch_normalization(xv, groups=1, eps=1e-3)], [xv], [Variable(gy)])
    numerical = numpy.zeros_like(x)
    h = 1e-6
    for index in numpy.ndindex(x.shape):
        step = numpy.zeros_like(x)
        step[index] = h
        up = (zca(x + step, 1, 1e-3)[0] * gy).sum()
        down = (zca(x - step, 1, 1e-3)[0] * gy).sum()
        numerical[index] = (up - down) / (2 * h)
    testing.assert_allclose(gx, numerical, atol=1e-7, rtol=1e-6)


# -- fixed decorrelated batch normalization --------------------------------------------------


@testing.parameterize(*testing.product({"shape,groups": SHAPES, "dtype": FLOATS}))
class TestFixedDecorrelatedBatchNormalization(FunctionTestCase):
    def generate_inputs(self):
        size = self.shape[1] // self.groups
        x = numpy.random.uniform(-1, 1, self.shape).astype(self.dtype)
        mean = numpy.random.uniform(-0.5, 0.5, (self.groups, size)).astype(self.dtype)
        projection = numpy.random.uniform(-1, 1, (self.groups, size, size)).astype(self.dtype)
        return x, mean, projection

    def forward(self, inputs, device):
        return (fixed_decorrelated_batch_normalization(*inputs, groups=self.groups),)

    def forward_expected(self, inputs):
        x, mean, projection = [a.astype(numpy.float64) for a in inputs]
        mats = group_matrices(x, self.groups)
        ys = [p @ (mat - mu[:, None]) for mat, mu, p in zip(mats, mean, projection)]
        return (ungroup(ys, x.shape).astype(self.dtype),)


def test_fixed_matches_training_mode_with_the_batch_statistics():
    numpy.random.seed(3)
    x = numpy.random.uniform(-1, 1, (8, 4, 2)).astype(numpy.float64)
    y = decorrelated_batch_normalization(x, groups=2, eps=1e-3)
    _, mean, projection = zca(x, 2, 1e-3)
    fixed = fixed_decorrelated_batch_normalization(x, mean, projection, groups=2)
    testing.assert_allclose(fixed.array, y.array, atol=1e-12, rtol=1e-10)


_X = numpy.zeros((4, 6), numpy.float32)
_X44 = numpy.zeros((4, 4), numpy.float32)
_MEAN = numpy.zeros((2, 3), numpy.float32)
_PROJECTION = numpy.zeros((2, 3, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_X44,),
            {"group": 2},
            TypeError,
            "decorrelated_batch_normalization() got unexpected",
        ),
        ((_X44,), {"groups": 2.0}, TypeError, "expected groups to be an int"),
        ((_X44,), {"groups": 0}, ValueError, "expected groups >= 1, got 0"),
        (
            (_X44,),
            {"eps": -1.0},
            ValueError,
            "decorrelated_batch_normalization: expected eps >= 0",
        ),
        (
            (_X,),
            {"groups": 4},
            InvalidType,
            ("DecorrelatedBatchNormalization", "x.shape[1] % 4 == 0"),
        ),
        (
            (_X.astype(numpy.int32),),
            {"groups": 2},
            InvalidType,
            ("DecorrelatedBatchNormalization", "x.dtype.kind == 'f'"),
        ),
        ((_X[0],), {"groups": 2}, InvalidType, ("DecorrelatedBatchNormalization", "x.ndim >= 2")),
        (
            (_X[:0],),
            {"groups": 2},
            InvalidType,
            ("DecorrelatedBatchNormalization", "x.shape[0] > 0"),
        ),
        (
            (_X,),
            {"groups": 2, "running_mean": numpy.zeros(6, numpy.float32)},
            InvalidType,
            ("DecorrelatedBatchNormalization", "running_mean is a floating array of shape (2, 3)"),
        ),
        (
            (_X,),
            {"groups": 2, "running_projection": numpy.zeros((2, 3), numpy.float32)},
            InvalidType,
            (
                "DecorrelatedBatchNormalization",
                "running_projection is a floating array of shape (2, 3, 3)",
            ),
        ),
        (
            fixed_decorrelated_batch_normalization,
            (_X, _MEAN[:1], _PROJECTION),
            {"groups": 2},
            InvalidType,
            ("FixedDecorrelatedBatchNormalization", "mean.shape[0] == 2"),
        ),
        (
            fixed_decorrelated_batch_normalization,
            (_X, _MEAN, _PROJECTION[:, :2]),
            {"groups": 2},
            InvalidType,
            ("FixedDecorrelatedBatchNormalization", "projection.shape[1] == 3"),
        ),
        (
            fixed_decorrelated_batch_normalization,
            (_X, _MEAN.astype(numpy.float64), _PROJECTION),
            {"groups": 2},
            InvalidType,
            ("FixedDecorrelatedBatchNormalization", "mean.dtype == x.dtype"),
        ),
        (
            fixed_decorrelated_batch_normalization,
            (_X, _MEAN, _PROJECTION[0]),
            {"groups": 2},
            InvalidType,
            ("FixedDecorrelatedBatchNormalization", "projection.ndim == 3"),
        ),
    ],
    function=decorrelated_batch_normalization,
)
