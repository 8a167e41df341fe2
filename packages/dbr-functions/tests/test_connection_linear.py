import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.linear import linear

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
M = 3  # output features


def linear_ref(x, W, b, n_batch_axes):
    """``x W^T + b`` in float64, one output element at a time."""
    batch_shape = x.shape[:n_batch_axes]
    x2 = x.reshape(int(numpy.prod(batch_shape)), -1).astype(numpy.float64)
    W = W.astype(numpy.float64)
    y = numpy.zeros((len(x2), len(W)))
    for i in range(len(x2)):
        for m in range(len(W)):
            y[i, m] = sum(x2[i, k] * W[m, k] for k in range(x2.shape[1]))
            if b is not None:
                y[i, m] += b[m]
    return y.reshape(batch_shape + (len(W),))


@testing.parameterize(
    *testing.product(
        {
            "shape_axes": [((4, 5), 1), ((4, 2, 3), 1), ((2, 3, 4), 2), ((2, 1, 3, 2), 3)],
            "with_bias": [True, False],
            "dtype": FLOATS,
        }
    )
)
class TestLinear(FunctionTestCase):
    def generate_inputs(self):
        x_shape, n_batch_axes = self.shape_axes
        n_in = int(numpy.prod(x_shape[n_batch_axes:]))
        x = numpy.random.uniform(-1, 1, x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, (M, n_in)).astype(self.dtype)
        if not self.with_bias:
            return x, W
        return x, W, numpy.random.uniform(-1, 1, M).astype(self.dtype)

    def forward(self, inputs, device):
        return (linear(*inputs, n_batch_axes=self.shape_axes[1]),)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if self.with_bias else None
        return (linear_ref(x, W, b, self.shape_axes[1]).astype(self.dtype),)


@testing.parameterize(
    {"x_dtype": numpy.float16, "w_dtype": numpy.float32},
    {"x_dtype": numpy.float32, "w_dtype": numpy.float64},
    {"x_dtype": numpy.float64, "w_dtype": numpy.float16},
)
class TestLinearMixedDtypes(FunctionTestCase):
    """``x`` and ``W`` of different dtypes: ``y`` and ``gx`` in ``x``'s, ``gW`` in ``W``'s."""

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, (4, 2, 3)).astype(self.x_dtype)
        W = numpy.random.uniform(-1, 1, (M, 6)).astype(self.w_dtype)
        b = numpy.random.uniform(-1, 1, M).astype(self.x_dtype)
        return x, W, b

    def forward(self, inputs, device):
        return (linear(*inputs),)

    def forward_expected(self, inputs):
        x, W, b = inputs
        return (linear_ref(x, W, b, 1).astype(self.x_dtype),)


def test_gradient_dtypes_follow_their_inputs():
    x = Variable(numpy.random.uniform(-1, 1, (4, 6)).astype(numpy.float16))
    W = Variable(numpy.random.uniform(-1, 1, (M, 6)).astype(numpy.float32))
    y = linear(x, W)
    assert y.dtype == numpy.float16
    gx, gW = grad([y], [x, W], [Variable(numpy.ones((4, M), numpy.float16))])
    assert gx.dtype == numpy.float16
    assert gW.dtype == numpy.float32


def test_float16_sums_in_float32():
    # 4096 products of 1 * (1 + 2^-10): a float16 running sum would stall at 2048.
    x = numpy.ones((1, 4096), numpy.float16)
    W = numpy.full((1, 4096), 1 + 2.0**-10, numpy.float16)
    y = linear(x, W).array
    assert y.dtype == numpy.float16
    assert y[0, 0] == numpy.float16(4096 * (1 + 2.0**-10))


def test_gradients_against_reference():
    x = Variable(numpy.random.uniform(-1, 1, (2, 3, 4)))
    W = Variable(numpy.random.uniform(-1, 1, (5, 4)))
    b = Variable(numpy.random.uniform(-1, 1, 5))
    y = linear(x, W, b, n_batch_axes=2)
    gy = numpy.random.uniform(-1, 1, (2, 3, 5))
    gx, gW, gb = grad([y], [x, W, b], [Variable(gy)])
    testing.assert_allclose(gx, gy @ W.array, rtol=1e-12)
    testing.assert_allclose(gW, numpy.einsum("ijm,ijk->mk", gy, x.array), rtol=1e-12)
    testing.assert_allclose(gb, gy.sum(axis=(0, 1)), rtol=1e-12)


@pytest.mark.parametrize("n_batch_axes", [1, 2])
def test_empty_batch(n_batch_axes):
    x = Variable(numpy.zeros((0, 2, 3), numpy.float32))
    n_in = 6 if n_batch_axes == 1 else 3
    W = Variable(numpy.ones((4, n_in), numpy.float32))
    b = Variable(numpy.ones(4, numpy.float32))
    y = linear(x, W, b, n_batch_axes=n_batch_axes)
    assert y.shape == ((0, 4) if n_batch_axes == 1 else (0, 2, 4))
    gx, gW, gb = grad([y], [x, W, b], [Variable(numpy.zeros(y.shape, numpy.float32))])
    assert gx.shape == (0, 2, 3)
    numpy.testing.assert_array_equal(gW.array, numpy.zeros((4, n_in), numpy.float32))
    numpy.testing.assert_array_equal(gb.array, numpy.zeros(4, numpy.float32))


def test_accepts_arrays_and_keeps_inputs():
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(numpy.float32)
    W = numpy.random.uniform(-1, 1, (2, 4)).astype(numpy.float32)
    x0, W0 = x.copy(), W.copy()
    y = linear(x, W)
    assert isinstance(y, Variable)
    testing.assert_allclose(y, x @ W.T)
    numpy.testing.assert_array_equal(x, x0)
    numpy.testing.assert_array_equal(W, W0)


_LINEAR = "LinearFunction"

test_bad_input = bad_input_test(
    [
        (
            (numpy.ones(6), numpy.ones((3, 6)), None),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "x.ndim"),
        ),
        (
            (numpy.ones((2, 3)), numpy.ones((4, 3)), None),
            {"n_batch_axes": 2},
            InvalidType,
            (_LINEAR, "x.ndim"),
        ),
        (
            (numpy.ones((2, 5)), numpy.ones((3, 6)), None),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "x.shape", "W.shape"),
        ),
        (
            (numpy.ones((2, 3, 4)), numpy.ones((3, 12)), None),
            {"n_batch_axes": 2},
            InvalidType,
            (_LINEAR, "x.shape", "W.shape"),
        ),
        (
            (numpy.ones((2, 6)), numpy.ones(6), None),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "W.ndim"),
        ),
        (
            (numpy.ones((2, 6), numpy.int32), numpy.ones((3, 6)), None),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "x.dtype.kind"),
        ),
        (
            (numpy.ones((2, 6)), numpy.ones((3, 6), numpy.int64), None),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "W.dtype.kind"),
        ),
        (
            (numpy.ones((2, 6)), numpy.ones((3, 6)), numpy.ones(4)),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "b.shape"),
        ),
        (
            (numpy.ones((2, 6)), numpy.ones((3, 6)), numpy.ones((1, 3))),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "b.ndim"),
        ),
        (
            (numpy.ones((2, 6)), numpy.ones((3, 6)), numpy.ones(3, numpy.float32)),
            {"n_batch_axes": 1},
            InvalidType,
            (_LINEAR, "b.dtype", "x.dtype"),
        ),
    ],
    function=linear,
)


@pytest.mark.parametrize("n_batch_axes", [0, -1])
def test_n_batch_axes_not_positive(n_batch_axes):
    with pytest.raises(
        ValueError, match=rf"linear: expected n_batch_axes >= 1, got {n_batch_axes}"
    ):
        linear(numpy.ones((2, 3)), numpy.ones((4, 3)), n_batch_axes=n_batch_axes)


@pytest.mark.parametrize("n_batch_axes", [1.0, True, None])
def test_n_batch_axes_not_int(n_batch_axes):
    with pytest.raises(TypeError, match=r"linear: expected n_batch_axes to be an int"):
        linear(numpy.ones((2, 3)), numpy.ones((4, 3)), n_batch_axes=n_batch_axes)
