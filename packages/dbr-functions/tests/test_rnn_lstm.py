import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.gradient_check import check_backward, check_double_backward
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.rnn.lstm import lstm

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def sigmoid(x):
    return 1.0 / (1.0 + numpy.exp(-x))


def reference(c_prev, x):
    """The LSTM cell in float64, gates interleaved as a, i, f, o per unit."""
    c64 = c_prev.astype(numpy.float64)
    x64 = x.astype(numpy.float64)
    batch, width = x.shape[:2]
    units = width // 4
    gates = x64.reshape((batch, units, 4) + x.shape[2:])
    a = numpy.tanh(gates[:, :, 0])
    i = sigmoid(gates[:, :, 1])
    f = sigmoid(gates[:, :, 2])
    o = sigmoid(gates[:, :, 3])
    c = c64.copy()
    c[:batch] = a * i + f * c64[:batch]
    h = o * numpy.tanh(c[:batch])
    return c.astype(c_prev.dtype), h.astype(c_prev.dtype)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                ((3, 4), (3, 16)),  # c_prev, x
                ((4, 3), (2, 12)),  # x has fewer rows: c_prev[2:] passes through
                ((2, 3, 2), (2, 12, 2)),  # trailing axes
                ((3, 1), (0, 4)),  # no running rows
            ],
            "dtype": FLOATS,
        }
    )
)
class TestLSTM(FunctionTestCase):
    def generate_inputs(self):
        c_shape, x_shape = self.shapes
        c_prev = numpy.random.uniform(-1, 1, c_shape).astype(self.dtype)
        x = numpy.random.uniform(-1, 1, x_shape).astype(self.dtype)
        return c_prev, x

    def forward(self, inputs, device):
        return lstm(*inputs)

    def forward_expected(self, inputs):
        return reference(*inputs)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matches_the_formula_on_hand_picked_gates(dtype):
    c_prev = numpy.array([[0.5, -2.0]], dtype)
    # unit 0: a=1, i=+inf-ish, f=-inf-ish, o=+inf-ish; unit 1: a=0, i=0, f=0, o=0
    x = numpy.array([[1.0, 30.0, -30.0, 30.0, 0.0, 0.0, 0.0, 0.0]], dtype)
    c, h = lstm(c_prev, x)
    tol = testing.tolerances(dtype)
    testing.assert_allclose(c.array, numpy.array([[numpy.tanh(1.0), -1.0]]), **tol)
    expected_h = [numpy.tanh(numpy.tanh(1.0)), 0.5 * numpy.tanh(-1.0)]
    testing.assert_allclose(h.array, numpy.array([expected_h]), **tol)


def test_rows_beyond_x_are_copied_and_get_the_gradient_of_c():
    c_prev = Variable(numpy.random.uniform(-1, 1, (4, 2)))
    x = Variable(numpy.random.uniform(-1, 1, (1, 8)))
    c, h = lstm(c_prev, x)
    numpy.testing.assert_array_equal(c.array[1:], c_prev.array[1:])
    gc = numpy.random.uniform(-1, 1, (4, 2))
    g_c_prev, g_x = grad([c], [c_prev, x], [gc])
    numpy.testing.assert_array_equal(g_c_prev.array[1:], gc[1:])
    assert h.shape == (1, 2)


@pytest.mark.parametrize("used", ["c", "h"])
def test_one_output_only(used):
    # Backprop from one output passes no gradient for the other; first and second order.
    c_prev = Variable(numpy.random.uniform(-1, 1, (3, 2)))
    x = Variable(numpy.random.uniform(-1, 1, (2, 8)))
    y = lstm(c_prev, x)[0 if used == "c" else 1]
    gy = numpy.random.uniform(-1, 1, y.shape)

    def f(c, x):
        return lstm(c, x)[0 if used == "c" else 1]

    check_backward(f, (c_prev.array, x.array), gy, atol=1e-7, rtol=1e-6)
    ggs = (numpy.random.uniform(-1, 1, (3, 2)), numpy.random.uniform(-1, 1, (2, 8)))
    check_double_backward(f, (c_prev.array, x.array), gy, ggs, atol=1e-6, rtol=1e-5)


def test_third_order_gradient():
    # Each backward is written with differentiable functions: a third order is exact too.
    c_prev = numpy.random.uniform(-1, 1, (2, 2))
    x = numpy.random.uniform(-1, 1, (2, 8))

    def second_order(c, x):
        cv, hv = lstm(c, x)
        gc, gx = grad([hv], [c, x], enable_double_backprop=True)
        g2 = grad([gx], [x], [Variable(numpy.ones((2, 8)))], enable_double_backprop=True)[0]
        return g2

    check_backward(second_order, (c_prev, x), numpy.random.uniform(-1, 1, (2, 8)), atol=1e-6)


def test_accepts_arrays_and_variables():
    c_prev = numpy.zeros((1, 1), numpy.float32)
    x = numpy.zeros((1, 4), numpy.float32)
    c1, h1 = lstm(c_prev, x)
    c2, h2 = lstm(Variable(c_prev), Variable(x))
    assert isinstance(c1, Variable) and isinstance(h1, Variable)
    numpy.testing.assert_array_equal(c1.array, c2.array)
    numpy.testing.assert_array_equal(h1.array, h2.array)


_C = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_C, numpy.zeros((2, 11), numpy.float32)),
            InvalidType,
            ("LSTM", "x.shape[1] == 4 * c_prev.shape[1]"),
        ),
        (
            (_C, numpy.zeros((3, 12), numpy.float32)),
            InvalidType,
            ("LSTM", "x.shape[0] <= c_prev.shape[0]"),
        ),
        (
            (_C, numpy.zeros((2, 12), numpy.float64)),
            InvalidType,
            ("LSTM", "x.dtype == c_prev.dtype"),
        ),
        (
            (_C.astype(numpy.int32), numpy.zeros((2, 12), numpy.int32)),
            InvalidType,
            ("LSTM", "c_prev.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(12, numpy.float32)),
            InvalidType,
            ("LSTM", "c_prev.ndim >= 2"),
        ),
        (
            (_C, numpy.zeros((2, 12, 1), numpy.float32)),
            InvalidType,
            ("LSTM", "x.ndim == c_prev.ndim"),
        ),
        (
            (numpy.zeros((2, 3, 2), numpy.float32), numpy.zeros((2, 12, 3), numpy.float32)),
            InvalidType,
            ("LSTM", "x.shape[2] == c_prev.shape[2]"),
        ),
    ],
    function=lstm,
)
