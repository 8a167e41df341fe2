import numpy
import pytest

from dbr.core import Variable, grad, testing, using_config
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.noise.dropout import dropout

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


# Every test leaves NumPy's global random state as it found it (conftest.py).
pytestmark = pytest.mark.usefixtures("keep_numpy_random_state")


def fixed_mask(shape, ratio, dtype):
    keep = numpy.random.uniform(size=shape) >= ratio
    return numpy.asarray(keep * (1.0 / (1.0 - ratio))).astype(dtype)


@testing.parameterize(
    *testing.product({"shape": [(3, 4), (2, 3, 2), ()], "ratio": [0.0, 0.3, 0.5], "dtype": FLOATS})
)
class TestDropoutWithMask(FunctionTestCase):
    """Values and gradients with the mask fixed, so that every call drops the same elements."""

    def before_test(self, test_name):
        self.mask = fixed_mask(self.shape, self.ratio, self.dtype)

    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-1, 1, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (dropout(inputs[0], self.ratio, mask=device.send(self.mask)),)

    def forward_expected(self, inputs):
        return (numpy.asarray(inputs[0] * self.mask).astype(self.dtype),)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ratio", [0.0, 0.1, 0.5, 0.9])
def test_drawn_mask_drops_the_expected_fraction_and_keeps_the_mean(ratio, dtype):
    numpy.random.seed(0)
    n = 200_000
    x = numpy.ones(n, dtype)
    y, mask = dropout(x, ratio, return_mask=True)
    scale = dtype(1.0 / (1.0 - ratio))
    assert mask.dtype == dtype and mask.shape == x.shape
    assert set(numpy.unique(mask).tolist()) <= {0.0, float(scale)}
    numpy.testing.assert_array_equal(y.array, x * mask)
    dropped = float(numpy.mean(mask == 0))
    sigma = (ratio * (1 - ratio) / n) ** 0.5
    assert abs(dropped - ratio) <= 5 * sigma + 1e-12
    # E[y] = x: the kept elements are scaled by 1 / (1 - ratio)
    mean_y = float(y.array.astype(numpy.float64).mean())
    assert abs(mean_y - 1.0) <= 5 * sigma * float(scale) + 2e-3 * (dtype == numpy.float16)


def test_test_mode_is_the_identity():
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(numpy.float32)
    with using_config("train", False):
        y = dropout(x, 0.5)
        y2, mask = dropout(Variable(x), 0.9, return_mask=True)
    assert isinstance(y, Variable)
    numpy.testing.assert_array_equal(y.array, x)
    numpy.testing.assert_array_equal(y2.array, x)
    assert mask is None


def test_numpy_seed_reproduces_the_mask():
    x = numpy.ones((4, 5), numpy.float32)
    numpy.random.seed(7)
    _, m1 = dropout(x, return_mask=True)
    numpy.random.seed(7)
    _, m2 = dropout(x, return_mask=True)
    numpy.testing.assert_array_equal(m1, m2)


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_a_ratio_of_zero_keeps_everything_and_draws_as_chainer(dtype):
    # Chainer's dropout draws numpy.random.rand(*x.shape) also at ratio 0.
    x = numpy.arange(6, dtype=dtype).reshape(2, 3)
    numpy.random.seed(11)
    y = dropout(x, 0.0)
    after = numpy.random.rand(3)
    numpy.random.seed(11)
    numpy.random.rand(2, 3)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))
    numpy.testing.assert_array_equal(y.array, x)


def test_a_ratio_of_zero_draws_in_chunks_as_one_draw_and_passes_gradients_through():
    # More uniforms than skip_uniforms draws at a time.
    x = Variable(numpy.random.uniform(-1, 1, (3, 65536 + 7)).astype(numpy.float32))
    state = numpy.random.get_state()
    y, mask = dropout(x, 0.0, return_mask=True)
    after = numpy.random.rand(4)
    numpy.random.set_state(state)
    numpy.random.random_sample(x.shape)
    numpy.testing.assert_array_equal(after, numpy.random.rand(4))
    numpy.testing.assert_array_equal(y.array, x.array)
    assert mask.dtype == numpy.float32 and mask.shape == x.shape and mask.flags.writeable
    numpy.testing.assert_array_equal(mask, 1)
    gy = Variable(numpy.random.uniform(-1, 1, x.shape).astype(numpy.float32))
    (gx,) = grad([y], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, gy.array)
    (ggy,) = grad([gx], [gy], [Variable(numpy.full(x.shape, 2, numpy.float32))])
    numpy.testing.assert_array_equal(ggy.array, 2)
    x2 = numpy.random.uniform(-1, 1, x.shape).astype(numpy.float32)
    numpy.testing.assert_array_equal(dropout(x2, 0.7, mask=mask).array, x2)


def test_returned_mask_repeats_the_dropout():
    x1 = numpy.random.uniform(-1, 1, (6, 7)).astype(numpy.float32)
    x2 = numpy.random.uniform(-1, 1, (6, 7)).astype(numpy.float32)
    y1, mask = dropout(x1, 0.4, return_mask=True)
    y2, mask2 = dropout(x2, 0.9, mask=mask, return_mask=True)
    assert mask2 is mask
    numpy.testing.assert_array_equal(y2.array, x2 * mask)
    numpy.testing.assert_array_equal(y1.array == 0, y2.array == 0)


def test_gradients_use_the_mask_drawn_in_forward():
    x = Variable(numpy.random.uniform(-1, 1, (5, 6)))
    y, mask = dropout(x, 0.5, return_mask=True)
    gy = Variable(numpy.random.uniform(-1, 1, (5, 6)))
    (gx,) = grad([y], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, gy.array * mask)
    (ggy,) = grad([gx], [gy], [Variable(numpy.ones((5, 6)))])
    numpy.testing.assert_array_equal(ggy.array, mask)


def test_empty_input():
    y, mask = dropout(numpy.zeros((0, 3), numpy.float32), return_mask=True)
    assert y.shape == (0, 3) and mask.shape == (0, 3)


_X3 = numpy.ones(3, numpy.float32)
_X23 = numpy.ones((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((_X3, -0.1), ValueError, "dropout: expected ratio in [0, 1), got"),
        ((_X3, 1.0), ValueError, "dropout: expected ratio in [0, 1), got"),
        ((_X3, 1.5), ValueError, "dropout: expected ratio in [0, 1), got"),
        ((_X3, "0.5"), TypeError, "dropout: expected ratio to be a float, got str"),
        ((numpy.ones(3, numpy.int32),), {"mask": None}, InvalidType, ("Dropout", "x.dtype.kind")),
        ((_X23,), {"mask": numpy.ones((3, 2), numpy.float32)}, InvalidType, "mask.shape"),
        ((_X23,), {"mask": numpy.ones((2, 3), numpy.float64)}, InvalidType, "mask.dtype"),
    ],
    function=dropout,
)
