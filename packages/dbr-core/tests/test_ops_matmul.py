import numpy
import pytest

from dbr.core import Variable, ops, testing
from dbr.core.ops.matmul import MatMul
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _transposed(x, trans):
    return x.swapaxes(-1, -2) if trans and x.ndim >= 2 else x


CASES = [
    {"case": "vector-vector", "a_shape": (3,), "b_shape": (3,)},
    {"case": "matrix-matrix", "a_shape": (2, 3), "b_shape": (3, 4)},
    {"case": "vector-matrix", "a_shape": (3,), "b_shape": (3, 4)},
    {"case": "matrix-vector", "a_shape": (2, 3), "b_shape": (3,)},
    {"case": "batched", "a_shape": (2, 2, 3), "b_shape": (2, 3, 4)},
    {"case": "batch-broadcast", "a_shape": (2, 1, 2, 3), "b_shape": (3, 3, 4)},
    {"case": "matrix-batch", "a_shape": (2, 3), "b_shape": (2, 3, 4)},
    {"case": "vector-batch", "a_shape": (3,), "b_shape": (2, 3, 4)},
    {"case": "batch-vector", "a_shape": (2, 2, 3), "b_shape": (3,)},
    {"case": "transa", "a_shape": (3, 2), "b_shape": (3, 4), "transa": True},
    {"case": "transb", "a_shape": (2, 3), "b_shape": (4, 3), "transb": True},
    {
        "case": "transa-transb-batched",
        "a_shape": (2, 3, 2),
        "b_shape": (2, 4, 3),
        "transa": True,
        "transb": True,
    },
    {"case": "transa-vector", "a_shape": (3,), "b_shape": (3, 4), "transa": True},
    {
        "case": "transb-batch-broadcast",
        "a_shape": (2, 1, 2, 3),
        "b_shape": (3, 4, 3),
        "transb": True,
    },
]


@testing.parameterize(*testing.product_dict(CASES, [{"dtype": d} for d in FLOATS]))
class TestMatMul(FunctionTestCase):
    transa = False
    transb = False

    def generate_inputs(self):
        return uniform(self.a_shape, self.dtype), uniform(self.b_shape, self.dtype)

    def forward(self, inputs, device):
        a, b = inputs
        return (ops.matmul(a, b, transa=self.transa, transb=self.transb),)

    def forward_expected(self, inputs):
        a, b = inputs
        return (
            numpy.asarray(numpy.matmul(_transposed(a, self.transa), _transposed(b, self.transb))),
        )


@testing.parameterize(
    *testing.product(
        {
            "form": ["x@a", "a@x"],
            "dtype": FLOATS,
        }
    )
)
class TestMatMulWithArray(FunctionTestCase):
    def generate_inputs(self):
        self.constant = uniform((3, 3), self.dtype)
        return (uniform((2, 3, 3), self.dtype),)

    def forward(self, inputs, device):
        x, a = inputs[0], device.send(self.constant)
        y = x @ a if self.form == "x@a" else a @ x
        assert isinstance(y, Variable)
        return (y,)

    def forward_expected(self, inputs):
        x, a = inputs[0], self.constant
        return (x @ a if self.form == "x@a" else a @ x,)


@testing.parameterize(
    *testing.product_dict(
        [CASES[1], CASES[5], CASES[12]],
        [{"a_dtype": a, "b_dtype": b} for a in FLOATS for b in FLOATS if a != b],
    )
)
class TestMatMulMixedDtypes(FunctionTestCase):
    """Operands of two dtypes: the product in NumPy's promotion, each gradient in its input's."""

    transa = False
    transb = False

    def before_test(self, test_name):
        if numpy.float16 in (self.a_dtype, self.b_dtype):
            self.check_forward_options = {"atol": 5e-3, "rtol": 5e-3}
            self.check_backward_options = {"atol": 5e-2, "rtol": 5e-2}
            self.check_double_backward_options = {"atol": 5e-2, "rtol": 5e-2}

    def generate_inputs(self):
        return uniform(self.a_shape, self.a_dtype), uniform(self.b_shape, self.b_dtype)

    def forward(self, inputs, device):
        a, b = inputs
        return (ops.matmul(a, b, transa=self.transa, transb=self.transb),)

    def forward_expected(self, inputs):
        a, b = (
            _transposed(x.astype(numpy.float64), t)
            for x, t in zip(inputs, (self.transa, self.transb))
        )
        return (numpy.matmul(a, b).astype(numpy.result_type(self.a_dtype, self.b_dtype)),)


def test_matmul_dtype_argument():
    a = numpy.ones((2, 3), numpy.float32)
    (y,) = MatMul(dtype=numpy.float16).apply((a, numpy.ones((3, 4), numpy.float64)))
    assert y.dtype == numpy.float16
    (y,) = MatMul(dtype=numpy.float64).apply((a, a.T.copy()))
    assert y.dtype == numpy.float64
    testing.assert_allclose(y, numpy.full((2, 2), 3.0), atol=0, rtol=0)


def test_matmul_operator_records_a_matmul_node():
    a = Variable(numpy.ones((2, 3), numpy.float32))
    b = Variable(numpy.ones((3, 4), numpy.float32))
    y = a @ b
    assert type(y.creator) is MatMul
    testing.assert_allclose(y, numpy.full((2, 4), 3, numpy.float32), atol=0, rtol=0)


def test_matmul_gradients_match_the_matrix_formulas():
    a_data = numpy.arange(6, dtype=numpy.float64).reshape(2, 3)
    b_data = numpy.arange(12, dtype=numpy.float64).reshape(3, 4) - 5
    gy = numpy.arange(8, dtype=numpy.float64).reshape(2, 4) - 3
    a, b = Variable(a_data), Variable(b_data)
    y = a @ b
    y.grad = gy
    y.backward()
    testing.assert_allclose(a.grad, gy @ b_data.T, atol=0, rtol=1e-12)
    testing.assert_allclose(b.grad, a_data.T @ gy, atol=0, rtol=1e-12)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (2,)), ((2, 2, 3), (4, 5))]
)
def test_matmul_of_mismatched_inner_dimensions_raises_invalid_type(a_shape, b_shape):
    a = Variable(numpy.zeros(a_shape, numpy.float32))
    b = Variable(numpy.zeros(b_shape, numpy.float32))
    with pytest.raises(InvalidType) as info:
        ops.matmul(a, b)
    message = str(info.value)
    assert "MatMul" in message
    assert str(a_shape) in message and str(b_shape) in message


def test_matmul_of_unbroadcastable_batches_raises_invalid_type():
    a = Variable(numpy.zeros((2, 2, 3), numpy.float32))
    b = Variable(numpy.zeros((3, 3, 4), numpy.float32))
    with pytest.raises(InvalidType, match="MatMul"):
        ops.matmul(a, b)


def test_matmul_transa_and_transb_change_which_shapes_are_compatible():
    a = Variable(numpy.zeros((3, 2), numpy.float32))
    b = Variable(numpy.zeros((4, 3), numpy.float32))
    with pytest.raises(InvalidType, match="MatMul"):
        ops.matmul(a, b)
    assert ops.matmul(a, b, transa=True, transb=True).shape == (2, 4)
    with pytest.raises(InvalidType, match="MatMul"):
        ops.matmul(a, b, transa=True)


@pytest.mark.parametrize(
    "dtype_a, dtype_b, expected",
    [
        pytest.param(numpy.int32, numpy.int32, ("a.dtype.kind == 'f'", "i != f"), id="integer"),
        pytest.param(
            numpy.float32, numpy.int32, ("b.dtype.kind == 'f'", "i != f"), id="float-integer"
        ),
    ],
)
def test_matmul_of_bad_dtypes_raises_invalid_type(dtype_a, dtype_b, expected):
    a = Variable(numpy.ones((2, 3), dtype_a))
    b = Variable(numpy.ones((3, 4), dtype_b))
    with pytest.raises(InvalidType) as info:
        a @ b
    message = str(info.value)
    assert "MatMul" in message
    assert all(part in message for part in expected)


def test_matmul_of_a_scalar_raises_invalid_type():
    a = Variable(numpy.ones((), numpy.float32))
    b = Variable(numpy.ones((3,), numpy.float32))
    with pytest.raises(InvalidType) as info:
        ops.matmul(a, b)
    assert "a.ndim >= 1" in str(info.value)
