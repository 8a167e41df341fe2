import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.gradient_check import check_backward, check_double_backward
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.rnn.slstm import slstm

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def sigmoid(x):
    return 1.0 / (1.0 + numpy.exp(-x))


def gates(x):
    """a, i, f, o of an lstm-style input (interleaved per unit), in float64."""
    r = x.astype(numpy.float64).reshape((x.shape[0], x.shape[1] // 4, 4) + x.shape[2:])
    return [r[:, :, k] for k in range(4)]


def reference(c1, c2, x1, x2):
    a1, i1, f1, o1 = gates(x1)
    a2, i2, f2, o2 = gates(x2)
    c = (
        numpy.tanh(a1) * sigmoid(i1)
        + numpy.tanh(a2) * sigmoid(i2)
        + sigmoid(f1) * c1.astype(numpy.float64)
        + sigmoid(f2) * c2.astype(numpy.float64)
    )
    h = sigmoid(o1 + o2) * numpy.tanh(c)
    return c.astype(c1.dtype), h.astype(c1.dtype)


@testing.parameterize(
    *testing.product(
        {"shape": [(3, 4), (2, 3, 2), (1, 1), (0, 2)], "dtype": FLOATS},
    )
)
class TestSLSTM(FunctionTestCase):
    def generate_inputs(self):
        c_shape = self.shape
        x_shape = (c_shape[0], 4 * c_shape[1]) + c_shape[2:]
        return tuple(
            numpy.random.uniform(-1, 1, s).astype(self.dtype)
            for s in (c_shape, c_shape, x_shape, x_shape)
        )

    def forward(self, inputs, device):
        return slstm(*inputs)

    def forward_expected(self, inputs):
        return reference(*inputs)


@pytest.mark.parametrize("used", [0, 1])
def test_one_output_only(used):
    args = tuple(numpy.random.uniform(-1, 1, s) for s in ((2, 3), (2, 3), (2, 12), (2, 12)))

    def f(*xs):
        return slstm(*xs)[used]

    gy = numpy.random.uniform(-1, 1, (2, 3))
    check_backward(f, args, gy, atol=1e-7, rtol=1e-6)
    ggs = tuple(numpy.random.uniform(-1, 1, a.shape) for a in args)
    check_double_backward(f, args, gy, ggs, atol=1e-6, rtol=1e-5)


def test_gradients_of_x1_and_x2_share_o_only():
    c1, c2 = (Variable(numpy.random.uniform(-1, 1, (2, 3))) for _ in range(2))
    x1, x2 = (Variable(numpy.random.uniform(-1, 1, (2, 12))) for _ in range(2))
    c, h = slstm(c1, c2, x1, x2)
    g1, g2 = grad([c, h], [x1, x2])
    r1 = g1.array.reshape(2, 3, 4)
    r2 = g2.array.reshape(2, 3, 4)
    # o enters as o1 + o2; each child has its own a, i and f
    numpy.testing.assert_allclose(r1[:, :, 3], r2[:, :, 3], rtol=1e-12)
    for k in (0, 1, 2):
        assert not numpy.allclose(r1[:, :, k], r2[:, :, k])


def test_accepts_arrays_and_variables():
    args = [numpy.zeros(s, numpy.float32) for s in ((1, 2), (1, 2), (1, 8), (1, 8))]
    c, h = slstm(*args)
    c2, h2 = slstm(*[Variable(a) for a in args])
    numpy.testing.assert_array_equal(c.array, c2.array)
    numpy.testing.assert_array_equal(h.array, h2.array)


_C = numpy.zeros((2, 3), numpy.float32)
_X = numpy.zeros((2, 12), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_C, _C, numpy.zeros((2, 8), numpy.float32), numpy.zeros((2, 8), numpy.float32)),
            InvalidType,
            ("SLSTM", "x1.shape[1] == 4 * c_prev1.shape[1]"),
        ),
        (
            (_C, numpy.zeros((2, 4), numpy.float32), _X, _X),
            InvalidType,
            ("SLSTM", "c_prev2.shape == c_prev1.shape"),
        ),
        (
            (_C, _C, _X, numpy.zeros((2, 16), numpy.float32)),
            InvalidType,
            ("SLSTM", "x2.shape == x1.shape"),
        ),
        (
            (_C, _C, numpy.zeros((3, 12), numpy.float32), numpy.zeros((3, 12), numpy.float32)),
            InvalidType,
            ("SLSTM", "x1.shape[0] == c_prev1.shape[0]"),
        ),
        (
            (_C, _C, _X, _X.astype(numpy.float64)),
            InvalidType,
            ("SLSTM", "x2.dtype == c_prev1.dtype"),
        ),
        (
            (_C.astype(numpy.int32),) * 2 + (_X.astype(numpy.int32),) * 2,
            InvalidType,
            ("SLSTM", "c_prev1.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros(3, numpy.float32),) * 2 + (numpy.zeros(12, numpy.float32),) * 2,
            InvalidType,
            ("SLSTM", "c_prev1.ndim >= 2"),
        ),
    ],
    function=slstm,
)


@pytest.mark.parametrize("wanted", [(0,), (1,), (2,), (3,), (0, 3)])
def test_gradients_of_some_inputs_only(wanted):
    arrays = [numpy.random.uniform(-1, 1, s) for s in ((2, 3), (2, 3), (2, 12), (2, 12))]
    every = [Variable(a) for a in arrays]
    full = grad([slstm(*every)[1]], every)
    xs = [Variable(a, requires_grad=k in wanted) for k, a in enumerate(arrays)]
    partial = grad([slstm(*xs)[1]], [xs[k] for k in wanted])
    for k, g in zip(wanted, partial):
        testing.assert_allclose(g.array, full[k].array, atol=0, rtol=0)
