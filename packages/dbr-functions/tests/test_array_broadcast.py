import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.broadcast import broadcast

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _broadcast_reference(arrays):
    # Index every input with the output index, clamping axes of size 1 to 0.
    ndim = max(a.ndim for a in arrays)
    shape = []
    for i in range(ndim):
        sizes = {a.shape[i - ndim + a.ndim] for a in arrays if i - ndim + a.ndim >= 0} - {1}
        shape.append(sizes.pop() if sizes else 1)
    shape = tuple(shape)
    outputs = []
    for a in arrays:
        out = numpy.empty(shape, a.dtype)
        for index in numpy.ndindex(*shape):
            src = tuple(0 if n == 1 else index[ndim - a.ndim + k] for k, n in enumerate(a.shape))
            out[index] = a[src]
        outputs.append(out)
    return tuple(outputs)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                [(3, 2)],
                [(3, 2), (3, 2)],
                [(3, 1), (1, 4)],
                [(2, 3, 1), (3, 4), ()],
                [(4,), (2, 1, 4), (1, 1)],
                [(0, 3), (1, 3)],
            ],
            "dtype": FLOATS,
        }
    )
)
class TestBroadcast(FunctionTestCase):
    def generate_inputs(self):
        return tuple([numpy.random.uniform(-1, 1, s).astype(self.dtype) for s in self.shapes])

    def forward(self, inputs, device):
        ys = broadcast(*inputs)
        return (ys,) if len(inputs) == 1 else tuple(ys)

    def forward_expected(self, inputs):
        return _broadcast_reference(inputs)

    function = staticmethod(broadcast)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros((4,), numpy.float32)),
                InvalidType,
                ("Broadcast", "(2, 3)", "(4,)"),
            ),
        ]


def test_single_input_is_returned_as_a_variable():
    x = numpy.ones((2, 3), numpy.float32)
    y = broadcast(x)
    assert isinstance(y, Variable)
    assert y.array is x
    v = Variable(x)
    assert broadcast(v) is v


def test_mixed_dtypes_keep_their_own():
    a, b = broadcast(numpy.zeros((2, 1), numpy.float32), numpy.zeros(3, numpy.int32))
    assert a.dtype == numpy.float32 and b.dtype == numpy.int32
    assert a.shape == b.shape == (2, 3)


def test_gradient_of_an_unused_output_is_none():
    a = Variable(numpy.ones((2, 1)))
    b = Variable(numpy.ones((1, 3)))
    ya, yb = broadcast(a, b)
    (ga,) = grad([ya], [a], [Variable(numpy.full((2, 3), 2.0))])
    testing.assert_allclose(ga.array, numpy.full((2, 1), 6.0), atol=0, rtol=0)
    ya, yb = broadcast(a, b)
    ga, gb = grad([yb], [a, b], [Variable(numpy.ones((2, 3)))])
    assert ga is None
    testing.assert_allclose(gb.array, numpy.full((1, 3), 2.0), atol=0, rtol=0)
