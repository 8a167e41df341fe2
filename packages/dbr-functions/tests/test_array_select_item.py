import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.array.select_item import select_item

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape": [(4, 3), (1, 5), (3, 1), (0, 3)],
            "t_dtype": [numpy.int32, numpy.int64],
            "dtype": FLOATS,
        }
    )
)
class TestSelectItem(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, self.shape).astype(self.dtype)
        t = numpy.random.randint(0, self.shape[1], self.shape[0]).astype(self.t_dtype)
        return x, t

    def forward(self, inputs, device):
        return (select_item(*inputs),)

    def forward_expected(self, inputs):
        x, t = inputs
        return (numpy.array([x[i, t[i]] for i in range(len(t))], x.dtype).reshape(len(t)),)


def test_gradient_lands_on_the_selected_elements():
    x = Variable(numpy.zeros((3, 2)))
    y = select_item(x, numpy.array([1, 0, 1], numpy.int32))
    y.grad = numpy.array([1.0, 2.0, 3.0])
    y.backward()
    testing.assert_allclose(x.grad, [[0.0, 1.0], [2.0, 0.0], [0.0, 3.0]], atol=0, rtol=0)


_SELECT_X = numpy.zeros((3, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_SELECT_X, numpy.zeros(3, numpy.float32)),
            InvalidType,
            ("SelectItem", "t.dtype.kind == 'i'"),
        ),
        ((_SELECT_X, numpy.zeros(2, numpy.int32)), InvalidType, "x.shape[0] == t.shape[0]"),
        (
            (numpy.zeros((3, 2, 1), numpy.float32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            "x.ndim == 2",
        ),
        ((_SELECT_X, numpy.zeros((3, 1), numpy.int32)), InvalidType, "t.ndim == 1"),
        (
            (_SELECT_X, numpy.array([0, 2, 1], numpy.int32)),
            ValueError,
            "select_item: expected every t in [0, x.shape[1]",
        ),
        (
            (_SELECT_X, numpy.array([0, -1, 1], numpy.int32)),
            ValueError,
            "select_item: expected every t in [0, x.shape[1]",
        ),
    ],
    function=select_item,
)
