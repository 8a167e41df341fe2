import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.gradient_check import check_backward, check_double_backward
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.rnn.tree_lstm import tree_lstm

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def sigmoid(x):
    return 1.0 / (1.0 + numpy.exp(-x))


def reference(*inputs):
    """Blocks a, i, o, f_1 .. f_n along the second axis, in float64."""
    cs = [c.astype(numpy.float64) for c in inputs[:-1]]
    x = inputs[-1].astype(numpy.float64)
    width = cs[0].shape[1]
    blocks = [x[:, k * width : (k + 1) * width] for k in range(3 + len(cs))]
    a, i, o = numpy.tanh(blocks[0]), sigmoid(blocks[1]), sigmoid(blocks[2])
    c = a * i + sum(sigmoid(f) * ck for f, ck in zip(blocks[3:], cs))
    h = o * numpy.tanh(c)
    return c.astype(inputs[0].dtype), h.astype(inputs[0].dtype)


@testing.parameterize(
    *testing.product(
        {"n_children": [1, 2, 3], "shape": [(3, 4), (2, 3, 2), (0, 2)], "dtype": FLOATS}
    )
)
class TestTreeLSTM(FunctionTestCase):
    def generate_inputs(self):
        c_shape = self.shape
        x_shape = (c_shape[0], (3 + self.n_children) * c_shape[1]) + c_shape[2:]
        cs = [
            numpy.random.uniform(-1, 1, c_shape).astype(self.dtype) for _ in range(self.n_children)
        ]
        return (*cs, numpy.random.uniform(-1, 1, x_shape).astype(self.dtype))

    def forward(self, inputs, device):
        return tree_lstm(*inputs)

    def forward_expected(self, inputs):
        return reference(*inputs)


def test_the_blocks_are_not_interleaved():
    # With one child, tree_lstm reads a, i, o, f as consecutive blocks.
    c = numpy.array([[2.0, 3.0]])
    x = numpy.array([[0.5, -0.5, 30.0, 30.0, 30.0, 30.0, -30.0, -30.0]])  # a | i | o | f
    cv, hv = tree_lstm(c, x)
    testing.assert_allclose(cv.array, numpy.tanh([[0.5, -0.5]]), atol=1e-12)
    testing.assert_allclose(hv.array, numpy.tanh(numpy.tanh([[0.5, -0.5]])), atol=1e-12)


@pytest.mark.parametrize("used", [0, 1])
def test_one_output_only(used):
    args = tuple(numpy.random.uniform(-1, 1, s) for s in ((2, 3), (2, 3), (2, 15)))

    def f(*xs):
        return tree_lstm(*xs)[used]

    gy = numpy.random.uniform(-1, 1, (2, 3))
    check_backward(f, args, gy, atol=1e-7, rtol=1e-6)
    ggs = tuple(numpy.random.uniform(-1, 1, a.shape) for a in args)
    check_double_backward(f, args, gy, ggs, atol=1e-6, rtol=1e-5)


def test_accepts_arrays_and_variables():
    c = numpy.zeros((1, 2), numpy.float32)
    x = numpy.zeros((1, 10), numpy.float32)
    c1, h1 = tree_lstm(c, c, x)
    c2, h2 = tree_lstm(Variable(c), Variable(c), Variable(x))
    numpy.testing.assert_array_equal(c1.array, c2.array)
    numpy.testing.assert_array_equal(h1.array, h2.array)


_C = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_C, _C, numpy.zeros((2, 12), numpy.float32)),
            InvalidType,
            ("TreeLSTM", "x.shape[1] == 5 * c1.shape[1]"),
        ),
        (
            (_C, numpy.zeros((2, 4), numpy.float32), numpy.zeros((2, 15), numpy.float32)),
            InvalidType,
            ("TreeLSTM", "x.shape[1] == 5 * c2.shape[1]"),
        ),
        (
            (_C, numpy.zeros((3, 12), numpy.float32)),
            InvalidType,
            ("TreeLSTM", "x.shape[0] == c1.shape[0]"),
        ),
        (
            (_C, numpy.zeros((2, 12), numpy.float64)),
            InvalidType,
            ("TreeLSTM", "x.dtype == c1.dtype"),
        ),
        (
            (_C.astype(numpy.int32), numpy.zeros((2, 12), numpy.int32)),
            InvalidType,
            ("TreeLSTM", "c1.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(12, numpy.float32)),
            InvalidType,
            ("TreeLSTM", "c1.ndim >= 2"),
        ),
        (
            (numpy.zeros((2, 3, 2), numpy.float32), numpy.zeros((2, 12, 3), numpy.float32)),
            InvalidType,
            ("TreeLSTM", "x.shape[2] == c1.shape[2]"),
        ),
        ((_C,), TypeError, "tree_lstm: expected at least two inputs"),
    ],
    function=tree_lstm,
)


@pytest.mark.parametrize("wanted", [(0,), (1,), (2,), (0, 2)])
def test_gradients_of_some_inputs_only(wanted):
    arrays = [numpy.random.uniform(-1, 1, s) for s in ((2, 3), (2, 3), (2, 15))]
    every = [Variable(a) for a in arrays]
    full = grad([tree_lstm(*every)[1]], every)
    xs = [Variable(a, requires_grad=k in wanted) for k, a in enumerate(arrays)]
    partial = grad([tree_lstm(*xs)[1]], [xs[k] for k in wanted])
    for k, g in zip(wanted, partial):
        testing.assert_allclose(g.array, full[k].array, atol=0, rtol=0)
