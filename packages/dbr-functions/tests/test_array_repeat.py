import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.repeat import repeat

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_repeat(x, repeats, axis):
    """Copies of each slice along axis, appended one by one."""
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    axis %= x.ndim
    n = x.shape[axis]
    counts = [repeats] * n if isinstance(repeats, int) else list(repeats)
    if len(counts) == 1:
        counts = counts * n
    parts = []
    for i, c in enumerate(counts):
        part = x[(slice(None),) * axis + (slice(i, i + 1),)]
        parts += [part] * c
    if not parts:
        shape = list(x.shape)
        shape[axis] = 0
        return numpy.empty(shape, x.dtype)
    return numpy.concatenate(parts, axis=axis)


@testing.parameterize(
    *testing.product(
        {
            "shape,repeats,axis": [
                ((2, 3), 2, None),
                ((2, 3), 2, 0),
                ((2, 3), 3, 1),
                ((2, 3), 2, -1),
                ((2, 3), (2,), 1),
                ((2, 3), (1, 0, 3), 1),
                ((2, 3), (3, 1), -2),
                ((2, 3), (1, 2, 0, 1, 1, 2), None),
                ((2, 3), 0, 0),
                ((2, 3), True, 0),
                ((2, 3), (True,), None),
                ((2, 3), [True, False, True], 1),
                ((4,), (0, 0, 2, 1), 0),
                ((), 3, None),
                ((1,), 3, 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestRepeat(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (repeat(inputs[0], self.repeats, self.axis),)

    def forward_expected(self, inputs):
        return (reference_repeat(inputs[0], self.repeats, self.axis),)

    function = staticmethod(repeat)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, (1, 2)), {"axis": 1}, InvalidType, ("Repeat", "x.shape[1] == 2")),
            ((x, (1, 2)), InvalidType, "x.size == 2"),
            ((x, 2), {"axis": 2}, InvalidType, "x.ndim > 2"),
            ((x, -1), ValueError, "repeat: expected every element of repeats to be >= 0"),
            ((x, 1.5), TypeError, "repeat: expected repeats to be an int or a tuple"),
            ((x, 2), {"axis": 0.0}, TypeError, "repeat: expected axis to be an int, got 0.0"),
        ]


def test_gradient_sums_the_copies():
    x = Variable(numpy.zeros(3, numpy.float32))
    y = repeat(x, (2, 0, 1))
    y.grad = numpy.array([1, 2, 4], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [3, 0, 4])


def test_float16_gradient_accumulates_in_float32():
    for repeats in (3000, (3000,)):
        x = Variable(numpy.zeros(1, numpy.float16))
        y = repeat(x, repeats)
        y.grad = numpy.ones(3000, numpy.float16)
        y.backward()
        assert x.grad.dtype == numpy.float16
        testing.assert_allclose(x.grad, [3000.0], atol=0, rtol=1e-3)
    x = Variable(numpy.zeros(2, numpy.float16))
    y = repeat(x, (3000, 1))
    y.grad = numpy.ones(3001, numpy.float16)
    y.backward()
    testing.assert_allclose(x.grad, [3000.0, 1.0], atol=0, rtol=1e-3)
