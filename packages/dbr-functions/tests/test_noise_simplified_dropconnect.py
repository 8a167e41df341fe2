import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.noise.simplified_dropconnect import simplified_dropconnect

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
N, M, IN_SHAPE = 4, 3, (2, 3)  # batch, outputs, per-sample input shape (6 features)


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


def linear_ref(x, W, b, mask, scale):
    """``y_i = x_i (W * mask_i * scale)^T + b`` in float64, one sample at a time."""
    x2 = x.reshape(len(x), -1).astype(numpy.float64)
    W = W.astype(numpy.float64)
    y = numpy.empty((len(x), len(W)))
    for i in range(len(x)):
        m = 1.0 if mask is None else (mask[i] if mask.ndim == 3 else mask)
        y[i] = (W * m * scale) @ x2[i]
    if b is not None:
        y += b
    return y


class DropconnectCase(FunctionTestCase):
    """Values and gradients with a given mask (or, for 'none', in test mode); see below."""

    ratio = 0.4

    def before_test(self, test_name):
        n_in = int(numpy.prod(IN_SHAPE))
        shape = {"batchwise": (N, M, n_in), "shared": (M, n_in), "none": None}[self.mask_kind]
        self.mask = None if shape is None else numpy.random.uniform(size=shape) >= self.ratio

    def generate_inputs(self):
        n_in = int(numpy.prod(IN_SHAPE))
        x_shape = (N,) + (IN_SHAPE if self.x_ndim == 3 else (n_in,))
        x = numpy.random.uniform(-1, 1, x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, (M, n_in)).astype(self.dtype)
        if not self.with_bias:
            return x, W
        return x, W, numpy.random.uniform(-1, 1, M).astype(self.dtype)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if self.with_bias else None
        if self.mask is None:
            return (simplified_dropconnect(x, W, b, ratio=self.ratio, train=False),)
        mask = device.send(self.mask)
        return (simplified_dropconnect(x, W, b, ratio=self.ratio, mask=mask),)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if self.with_bias else None
        scale = 1.0 if self.mask is None else 1.0 / (1.0 - self.ratio)
        return (linear_ref(x, W, b, self.mask, scale).astype(x.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "mask_kind": ["batchwise", "shared", "none"],
            "x_ndim": [2, 3],
            "with_bias": [True, False],
            "dtype": FLOATS,
        }
    )
)
class TestSimplifiedDropconnect(DropconnectCase):
    """One dtype for x, W and b."""


@testing.parameterize(
    *testing.product(
        {
            "mask_kind": ["batchwise", "shared"],
            "x_ndim": [2],
            "with_bias": [True],
            "x_dtype": FLOATS,
            "W_dtype": FLOATS,
        }
    )
)
class TestSimplifiedDropconnectMixedDtypes(DropconnectCase):
    """x and W of two dtypes: y (and b) in x's dtype, each gradient in its input's dtype."""

    dtype = None

    def before_test(self, test_name):
        super().before_test(test_name)
        families.loosen_for_float16(self, self.x_dtype, self.W_dtype)

    def generate_inputs(self):
        x, W, b = (numpy.random.uniform(-1, 1, shape) for shape in ((N, 6), (M, 6), (M,)))
        return x.astype(self.x_dtype), W.astype(self.W_dtype), b.astype(self.x_dtype)


@pytest.mark.parametrize("use_batchwise_mask", [True, False])
@pytest.mark.parametrize("ratio", [0.2, 0.5])
def test_drawn_mask_drops_weights_with_probability_ratio(ratio, use_batchwise_mask):
    # With x_i = e_j and W = 1, y_i[k] is the kept-and-scaled weight (k, j) of sample i.
    numpy.random.seed(0)
    n_in, n_out, batch = 50, 40, 60
    x = numpy.tile(numpy.eye(n_in), (batch // n_in + 1, 1))[:batch]
    W = numpy.ones((n_out, n_in))
    y = simplified_dropconnect(x, W, ratio=ratio, use_batchwise_mask=use_batchwise_mask).array
    scale = 1.0 / (1.0 - ratio)
    assert set(numpy.unique(y).tolist()) <= {0.0, scale}
    dropped = float(numpy.mean(y == 0))
    count = y.size
    assert abs(dropped - ratio) <= 5 * (ratio * (1 - ratio) / count) ** 0.5 * (
        1 if use_batchwise_mask else 2
    )
    # samples 0 and n_in read the same weight column: equal only for a shared mask
    same = numpy.array_equal(y[0], y[n_in])
    assert same == (not use_batchwise_mask)


def test_drawn_mask_keeps_the_mean():
    numpy.random.seed(1)
    x = numpy.random.uniform(-1, 1, (2000, 5))
    W = numpy.random.uniform(-1, 1, (3, 5))
    y = simplified_dropconnect(x, W, ratio=0.5).array
    # y - x W^T has mean 0 per sample; its standard deviation is at most |x_i| |W| here
    diff = (y - x @ W.T).mean()
    assert abs(diff) < 5 * numpy.sqrt(5.0) / numpy.sqrt(y.size)


def test_gradients_use_the_mask_drawn_in_forward():
    x = Variable(numpy.random.uniform(-1, 1, (4, 6)))
    W = Variable(numpy.random.uniform(-1, 1, (3, 6)))
    b = Variable(numpy.random.uniform(-1, 1, 3))
    ratio = 0.5
    y = simplified_dropconnect(x, W, b, ratio=ratio)
    mask = y.creator.mask
    assert mask.shape == (4, 3, 6) and mask.dtype == numpy.bool_
    W_eff = W.array * mask * 2.0
    testing.assert_allclose(y, numpy.einsum("ikj,ij->ik", W_eff, x.array) + b.array, rtol=1e-12)
    gy = numpy.random.uniform(-1, 1, (4, 3))
    gx, gW, gb = grad([y], [x, W, b], [Variable(gy)])
    testing.assert_allclose(gx, numpy.einsum("ik,ikj->ij", gy, W_eff), rtol=1e-12)
    testing.assert_allclose(gW, numpy.einsum("ik,ij,ikj->kj", gy, x.array, mask * 2.0), rtol=1e-12)
    testing.assert_allclose(gb, gy.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, mask_shape",
    [
        ({"ratio": 0.9, "train": False}, (4, 3, 6)),
        ({"ratio": 0.0}, (4, 3, 6)),
        ({"ratio": 0.0, "use_batchwise_mask": False}, (3, 6)),
    ],
)
def test_a_ratio_of_zero_is_a_linear_layer_and_draws_the_mask_as_chainer(kwargs, mask_shape):
    # Chainer draws the mask also when the ratio is 0 (test mode included):
    # numpy.random must advance alike so that a seeded run goes on as Chainer's.
    x = numpy.random.uniform(-1, 1, (4, 6))
    W = numpy.random.uniform(-1, 1, (3, 6))
    numpy.random.seed(7)
    y = simplified_dropconnect(x, W, **kwargs)
    after = numpy.random.rand(3)
    numpy.random.seed(7)
    numpy.random.rand(*mask_shape)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))
    testing.assert_allclose(y, x @ W.T, rtol=1e-12)


def test_mask_given_as_variable_overrides_use_batchwise_mask():
    x = numpy.ones((2, 3))
    W = numpy.ones((2, 3))
    mask = Variable(numpy.array([[True, False, True], [False, False, True]]))
    y = simplified_dropconnect(x, W, ratio=0.5, mask=mask, use_batchwise_mask=True)
    numpy.testing.assert_array_equal(y.array, [[4.0, 2.0], [4.0, 2.0]])


def test_empty_batch():
    x = Variable(numpy.zeros((0, 2, 3), numpy.float32))
    W = Variable(numpy.ones((4, 6), numpy.float32))
    y = simplified_dropconnect(x, W)
    assert y.shape == (0, 4)
    gx, gW = grad([y], [x, W], [Variable(numpy.zeros((0, 4), numpy.float32))])
    assert gx.shape == (0, 2, 3)
    numpy.testing.assert_array_equal(gW.array, numpy.zeros((4, 6), numpy.float32))


_X = numpy.ones((2, 6))
_W = numpy.ones((3, 6))

test_bad_input = bad_input_test(
    [
        (
            (numpy.ones(6), _W, None),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "x.ndim"),
        ),
        (
            (numpy.ones((2, 5)), _W, None),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "x.shape", "W.shape"),
        ),
        (
            (_X, numpy.ones(6), None),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "W.ndim"),
        ),
        (
            (numpy.ones((2, 6), numpy.int32), _W, None),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "x.dtype.kind"),
        ),
        (
            (_X, _W.astype(numpy.int32), None),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "W.dtype.kind"),
        ),
        (
            (_X, _W, numpy.ones(3, numpy.float32)),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "b.dtype == x.dtype"),
        ),
        (
            (_X, _W, numpy.ones(4)),
            {"mask": None},
            InvalidType,
            ("SimplifiedDropconnect", "b.shape"),
        ),
        (
            (_X, _W, None),
            {"mask": numpy.ones((3, 3), bool)},
            InvalidType,
            ("SimplifiedDropconnect", "mask.shape"),
        ),
        (
            (_X, _W, None),
            {"mask": numpy.ones((5, 3, 6), bool)},
            InvalidType,
            ("SimplifiedDropconnect", "mask.shape"),
        ),
        (
            (_X, _W),
            {"mask": numpy.ones(6, bool)},
            ValueError,
            "simplified_dropconnect: expected mask of shape",
        ),
        (
            (_X, _W),
            {"ratio": -0.5},
            ValueError,
            "simplified_dropconnect: expected ratio in [0, 1)",
        ),
        ((_X, _W), {"ratio": 1.0}, ValueError, "simplified_dropconnect: expected ratio in [0, 1)"),
    ],
    function=simplified_dropconnect,
)
