import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.contrastive import contrastive

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(x0, x1, y, margin, reduce):
    d = numpy.sqrt(((x0.astype(numpy.float64) - x1) ** 2).sum(axis=1))
    loss = 0.5 * (y * d**2 + (1 - y) * numpy.maximum(margin - d, 0) ** 2)
    return loss.mean() if reduce == "mean" else loss


@testing.parameterize(
    *testing.product(
        {
            "margin": [1.0, 2.5],
            "reduce": ["mean", "no"],
            "shape": [(6, 3), (1, 4)],
            "dtype": FLOATS,
        }
    )
)
class TestContrastive(FunctionTestCase):
    def generate_inputs(self):
        n, k = self.shape
        x0 = numpy.random.uniform(-1, 1, self.shape)
        # Distances in [0.2, 2.2], at least 0.1 away from the margin (the hinge's kink).
        direction = numpy.random.normal(size=self.shape)
        direction /= numpy.linalg.norm(direction, axis=1, keepdims=True)
        dist = numpy.random.uniform(0.2, 2.2, (n, 1))
        dist = numpy.where(numpy.abs(dist - self.margin) < 0.1, dist + 0.2, dist)
        x1 = x0 + dist * direction
        y = numpy.random.randint(0, 2, n).astype(numpy.int32)
        return x0.astype(self.dtype), x1.astype(self.dtype), y

    def forward(self, inputs, device):
        x0, x1, y = inputs
        return (contrastive(x0, x1, y, margin=self.margin, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x0, x1, y = inputs
        loss = _reference(x0, x1, y, self.margin, self.reduce)
        return (numpy.asarray(loss).astype(self.dtype),)


def test_default_margin_and_reduce():
    x0 = numpy.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], numpy.float32)
    x1 = numpy.array([[-1.0, 3.0, 1.0], [3.5, 0.5, -2.0]], numpy.float32)
    y = numpy.array([1, 0], numpy.int32)
    assert float(contrastive(x0, x1, y).array) == pytest.approx(0.3125)
    assert float(contrastive(x0, x1, y, margin=3.0).array) == pytest.approx(0.3528857, rel=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gradient_is_finite_for_identical_dissimilar_samples(dtype):
    x0 = Variable(numpy.ones((2, 3), dtype))
    x1 = Variable(numpy.ones((2, 3), dtype))
    contrastive(x0, x1, numpy.array([0, 1], numpy.int32)).backward()
    assert numpy.isfinite(x0.grad).all() and numpy.isfinite(x1.grad).all()


def _inputs(**change):
    """Valid float32 x0, x1 of (2, 3) and int32 y of (2,), with the shapes and dtypes in change."""
    shapes = {"x0": (2, 3), "x1": (2, 3), "y": (2,)}
    dtypes = {"x0": numpy.float32, "x1": numpy.float32, "y": numpy.int32}
    for name, value in change.items():
        (shapes if isinstance(value, tuple) else dtypes)[name] = value
    return tuple(numpy.zeros(shapes[name], dtypes[name]) for name in ("x0", "x1", "y"))


test_bad_input = bad_input_test(
    [
        (
            _inputs(x0=numpy.int32, x1=numpy.int32),
            InvalidType,
            ("Contrastive", "x0.dtype.kind == 'f'"),
        ),
        (_inputs(x1=numpy.float64), InvalidType, ("Contrastive", "x0.dtype == x1.dtype")),
        (_inputs(y=numpy.float32), InvalidType, ("Contrastive", "y.dtype.kind == 'i'")),
        (_inputs(x1=(2, 4)), InvalidType, ("Contrastive", "x0.shape == x1.shape")),
        (_inputs(y=(3,)), InvalidType, ("Contrastive", "x1.shape[0] == y.shape[0]")),
        (
            _inputs(x0=(0, 3), x1=(0, 3), y=(0,)),
            InvalidType,
            ("Contrastive", "x1.shape[0] > 0"),
        ),
        (_inputs(x0=(3,), x1=(3,), y=(3,)), InvalidType, ("Contrastive", "x0.ndim == 2")),
    ]
    + [
        (
            _inputs(),
            {"margin": margin},
            ValueError,
            "contrastive: expected margin to be a positive",
        )
        for margin in (0, -1.0, float("inf"))
    ]
    + [
        (
            _inputs(),
            {"reduce": "sum"},
            ValueError,
            "contrastive: expected reduce to be 'mean' or 'no'",
        ),
    ],
    function=contrastive,
)
