import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.pad import PadGrad, pad

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def source_index(i, n, mode):
    """The input position that padded position i (relative to the first input element) copies."""
    if mode == "edge":
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "symmetric":
        period = 2 * n
        j = i % period
        return j if j < n else period - 1 - j
    if n == 1:  # reflect
        return 0
    period = 2 * (n - 1)
    j = i % period
    return j if j < n else period - j


def reference_pad(x, pairs, mode, value=0):
    out_shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pairs))
    y = numpy.empty(out_shape, x.dtype)
    for index in numpy.ndindex(*out_shape):
        rel = [i - b for i, (b, _) in zip(index, pairs)]
        inside = all(0 <= r < n for r, n in zip(rel, x.shape))
        if mode == "constant":
            y[index] = x[tuple(rel)] if inside else value
        else:
            y[index] = x[tuple(source_index(r, n, mode) for r, n in zip(rel, x.shape))]
    return y


@testing.parameterize(
    *testing.product(
        {
            "shape,pad_width,pairs": [
                ((3,), 1, [(1, 1)]),
                ((3,), (1, 2), [(1, 2)]),
                ((2, 3), ((1, 0), (2, 3)), [(1, 0), (2, 3)]),
                ((2, 3), ((0, 1),), [(0, 1), (0, 1)]),
                ((2, 3), (2,), [(2, 2), (2, 2)]),
                ((2, 3), 0, [(0, 0), (0, 0)]),
                ((3, 2), ((7, 5), (4, 0)), [(7, 5), (4, 0)]),
                ((1, 2, 2), ((1, 2), (0, 0), (3, 1)), [(1, 2), (0, 0), (3, 1)]),
                # Pads wider than the axis on one side only: cupy.pad 14.x gets
                # wrap (n=2, 3), reflect (n=3) and symmetric (n=2) of these wrong.
                ((2, 3), ((1, 8), (8, 1)), [(1, 8), (8, 1)]),
            ],
            "mode": ["constant", "edge", "reflect", "symmetric", "wrap"],
            "dtype": FLOATS,
        }
    )
)
class TestPad(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (pad(inputs[0], self.pad_width, self.mode),)

    def forward_expected(self, inputs):
        return (reference_pad(inputs[0], self.pairs, self.mode),)

    function = staticmethod(pad)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            (
                (numpy.zeros((2, 3), numpy.int32), 1, "constant"),
                InvalidType,
                ("Pad", "x.dtype.kind == 'f'"),
            ),
            ((numpy.zeros((0, 3), numpy.float32), 1, "edge"), InvalidType, "x.shape[0] > 0"),
            ((x, 1, "mean"), ValueError, "pad: expected mode to be one of"),
            (
                (x, (1, 2, 3), "constant"),
                ValueError,
                "pad: expected pad_width to be broadcastable to",
            ),
            ((x, -1, "constant"), ValueError, "pad: expected pad_width to be non-negative"),
            ((x, 1.5, "constant"), TypeError, "pad: expected pad_width to hold ints"),
            (
                (x, 1, "constant"),
                {"constant_values": (1, 2, 3)},
                ValueError,
                "pad: expected constant_values to be broadcastable",
            ),
            (
                (x, 1, "edge"),
                {"constant_values": 1},
                TypeError,
                "pad: unexpected keyword argument 'constant_values'",
            ),
            (
                (x, 1, "constant"),
                {"reflect_type": "even"},
                TypeError,
                "pad: unexpected keyword argument 'reflect_type'",
            ),
            (
                (x, 1, "reflect"),
                {"reflect_type": "odd"},
                ValueError,
                "pad: expected reflect_type to be 'even'",
            ),
        ]


@testing.parameterize(
    *testing.product({"constant_values": [1.5, ((1, 2), (3, 4))], "dtype": FLOATS})
)
class TestPadConstantValues(FunctionTestCase):
    def generate_inputs(self):
        return (uniform((2, 3), self.dtype),)

    def forward(self, inputs, device):
        y = pad(inputs[0], ((1, 2), (2, 1)), "constant", constant_values=self.constant_values)
        return (y,)

    def forward_expected(self, inputs):
        x = inputs[0]
        values = numpy.broadcast_to(numpy.asarray(self.constant_values, numpy.float64), (2, 2))
        y = numpy.empty((5, 6), x.dtype)
        # As numpy.pad: axis 0's borders are filled first, then axis 1's over the corners.
        y[:1, :] = values[0, 0]
        y[3:, :] = values[0, 1]
        y[:, :2] = values[1, 0]
        y[:, 5:] = values[1, 1]
        y[1:3, 2:5] = x
        return (y,)


def test_constant_mode_on_an_empty_axis():
    y = pad(numpy.zeros((0, 2), numpy.float32), 1, "constant", constant_values=2)
    numpy.testing.assert_array_equal(y.array, numpy.full((2, 4), 2, numpy.float32))


def test_copying_mode_gradient_adds_every_copy():
    x = Variable(numpy.zeros(3, numpy.float32))
    y = pad(x, (2, 1), "edge")
    y.grad = numpy.array([1, 2, 4, 8, 16, 32], numpy.float32)
    y.backward(enable_double_backprop=True)
    numpy.testing.assert_array_equal(x.grad, [1 + 2 + 4, 8, 16 + 32])
    assert isinstance(x.grad_var.creator, PadGrad)


@pytest.mark.parametrize("mode", ["edge", "wrap", "symmetric", "reflect"])
def test_source_indices_repeat_the_axis_periodically_for_any_pad(mode):
    # Independent of numpy.pad, whose wrap and reflect of pads wider than the axis
    # differ between NumPy 1.26 and 2.x.
    from dbr.functions.array.pad import _source_indices

    for n in range(1, 5):
        for before in range(0, 10):
            for after in range(0, 10):
                want = [source_index(i, n, mode) for i in range(-before, n + after)]
                assert _source_indices(n, before, after, mode).tolist() == want, (n, before, after)
