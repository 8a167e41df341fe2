import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.l2_normalization import normalize

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference(x, eps, axis):
    x = x.astype(numpy.float64)
    norm = numpy.sqrt((x * x).sum(axis=axis, keepdims=True))
    return x / (norm + eps)


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((3, 4), 1),
                ((3, 4), 0),
                ((3, 4), -1),
                ((2, 3, 4), (1, 2)),
                ((2, 3, 4), (0, -1)),
                ((5,), 0),
                ((2, 3, 2), 1),
            ],
            "eps": [1e-5, 0.5],
            "dtype": FLOATS,
        }
    )
)
class TestNormalize(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (normalize(inputs[0], eps=self.eps, axis=self.axis),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.eps, self.axis).astype(self.dtype),)

    function = staticmethod(normalize)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 2},
                InvalidType,
                ("NormalizeL2", "x.ndim == 2"),
            ),
            (
                (numpy.zeros((2, 3), numpy.int32),),
                InvalidType,
                ("NormalizeL2", "x.dtype.kind == 'f'"),
            ),
        ]


def test_default_axis_is_1():
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(numpy.float32)
    testing.assert_allclose(normalize(x).array, reference(x, 1e-5, 1), atol=1e-6, rtol=1e-5)


def test_zero_vectors():
    x = Variable(numpy.array([[0.0, 0.0], [3.0, 4.0]]))
    y = normalize(x, eps=0.5)
    testing.assert_allclose(y.array, [[0.0, 0.0], [3 / 5.5, 4 / 5.5]], atol=0, rtol=1e-12)
    gy = numpy.array([[1.0, -2.0], [0.5, 0.25]])
    (gx,) = grad([y], [x], [Variable(gy)])
    assert numpy.isfinite(gx.array).all()
    # At a zero vector the function is x / eps: the gradient is gy / eps.
    testing.assert_allclose(gx.array[0], gy[0] / 0.5, atol=0, rtol=1e-12)
    v = numpy.array([3.0, 4.0])
    expected = gy[1] / 5.5 - v * (gy[1] @ v) / (5 * 5.5**2)
    testing.assert_allclose(gx.array[1], expected, atol=0, rtol=1e-12)


def test_arguments_are_checked():
    x = numpy.zeros((2, 3), numpy.float32)
    with pytest.raises(TypeError, match="normalize: expected axis to be an int or a tuple"):
        normalize(x, axis=None)
    with pytest.raises(TypeError, match="normalize: expected axis"):
        normalize(x, axis="1")
    with pytest.raises(ValueError, match=r"normalize: duplicate value in axis \(1, 1\)"):
        normalize(x, axis=(1, 1))
    with pytest.raises(ValueError, match="normalize: expected eps >= 0"):
        normalize(x, eps=-1e-5)
