import operator

import numpy
import pytest

from dbr.core import Variable, grad, ops, testing
from dbr.core.ops import arithmetic
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def away_from_zero(low, high, shape, dtype):
    """Values with magnitude in [low, high) and a random sign."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1, 1)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


# -- binary operators between two Variables, with broadcasting ------------------------

BINARY = {
    "add": (operator.add, (uniform, -1, 1), (uniform, -1, 1)),
    "sub": (operator.sub, (uniform, -1, 1), (uniform, -1, 1)),
    "mul": (operator.mul, (uniform, -1, 1), (uniform, -1, 1)),
    "div": (operator.truediv, (uniform, -1, 1), (away_from_zero, 0.5, 1.5)),
    "pow": (operator.pow, (uniform, 0.5, 1.5), (uniform, -1.5, 1.5)),
}

BROADCAST_SHAPES = [
    ((3, 2), (3, 2)),
    ((3, 2), (2,)),
    ((3, 2), (1, 2)),
    ((2,), (3, 2)),
    ((3, 1), (1, 2)),
    ((), (3, 2)),
    ((3, 2), ()),
    ((2, 1, 3), (4, 1)),
]


class _BinaryCase(FunctionTestCase):
    def generate_inputs(self):
        _, (gen0, low0, high0), (gen1, low1, high1) = BINARY[self.op]
        shape0, shape1 = self.shapes
        return gen0(low0, high0, shape0, self.dtype), gen1(low1, high1, shape1, self.dtype)

    def forward(self, inputs, device):
        x0, x1 = inputs
        return (BINARY[self.op][0](x0, x1),)

    def forward_expected(self, inputs):
        x0, x1 = inputs
        return (BINARY[self.op][0](x0, x1),)


_BINARY_PARAMS = testing.product({"op": list(BINARY), "shapes": BROADCAST_SHAPES, "dtype": FLOATS})


@testing.parameterize(*_BINARY_PARAMS)
class TestBinaryOperator(_BinaryCase):
    pass


def test_div_second_order_gradient_has_the_input_shape():
    a = Variable(numpy.ones((3, 2)))
    x = Variable(numpy.full(2, 2.0))
    gy = Variable(numpy.ones((3, 2)))
    _, gx = grad([a / x], [a, x], [gy], enable_double_backprop=True)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(2))])
    assert ggx.shape == (2,)
    testing.assert_allclose(ggx, 2 * 3 / 2.0**3 * numpy.ones(2), atol=0, rtol=1e-12)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                ((3, 2), (3, 2), (3, 2)),
                ((3, 2), (2,), (1, 2)),
                ((), (2, 3), (3,)),
                ((4,),),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestAddMany(FunctionTestCase):
    def generate_inputs(self):
        return tuple(uniform(-1, 1, shape, self.dtype) for shape in self.shapes)

    def forward(self, inputs, device):
        return (ops.add(*inputs),)

    def forward_expected(self, inputs):
        y = inputs[0].copy()
        for x in inputs[1:]:
            y = y + x
        return (y,)


# -- one Variable with a Python scalar, in both orders --------------------------------

CONSTANT_FORMS = {
    "x+2": (lambda x: x + 2, uniform, -1, 1),
    "2+x": (lambda x: 2 + x, uniform, -1, 1),
    "x-2": (lambda x: x - 2, uniform, -1, 1),
    "2-x": (lambda x: 2 - x, uniform, -1, 1),
    "x*2": (lambda x: x * 2, uniform, -1, 1),
    "2*x": (lambda x: 2 * x, uniform, -1, 1),
    "x*-1.5": (lambda x: x * -1.5, uniform, -1, 1),
    "x/2": (lambda x: x / 2, uniform, -1, 1),
    "2/x": (lambda x: 2 / x, away_from_zero, 0.5, 1.5),
    "x**2": (lambda x: x**2, uniform, -1, 1),
    "x**3": (lambda x: x**3, uniform, -1, 1),
    "x**3.5": (lambda x: x**3.5, uniform, 0.5, 1.5),
    "x**-2": (lambda x: x**-2, away_from_zero, 0.5, 1.5),
    "x**1": (lambda x: x**1, uniform, -1, 1),
    "x**0": (lambda x: x**0, away_from_zero, 0.5, 1.5),
    "2**x": (lambda x: 2**x, uniform, -1, 1),
    "0.5**x": (lambda x: 0.5**x, uniform, -1, 1),
}


class _ConstantCase(FunctionTestCase):
    def generate_inputs(self):
        _, gen, low, high = CONSTANT_FORMS[self.form]
        return (gen(low, high, self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (CONSTANT_FORMS[self.form][0](inputs[0]),)

    def forward_expected(self, inputs):
        # The scalar takes the input's dtype (NumPy 1.x would promote a 0-d input instead).
        x = inputs[0]
        return (numpy.asarray(CONSTANT_FORMS[self.form][0](x)).astype(x.dtype),)


_CONSTANT_PARAMS = testing.product(
    {"form": list(CONSTANT_FORMS), "shape": [(3, 2), ()], "dtype": FLOATS}
)


@testing.parameterize(*_CONSTANT_PARAMS)
class TestConstantOperand(_ConstantCase):
    pass


@pytest.mark.parametrize("exponent", [3.5, -2])
def test_pow_gradient_of_a_0d_float32_input_is_float32(exponent):
    x = Variable(numpy.array(0.7, numpy.float32))
    (x**exponent).backward()
    assert x.grad.dtype == numpy.float32


# -- one Variable with a constant array, in both orders -------------------------------
# ``ndarray - Variable`` reaches Variable.__rsub__ because of __array_priority__.

ARRAY_FORMS = {
    "x+a": (lambda x, a: x + a, (uniform, -1, 1), (uniform, -1, 1)),
    "a+x": (lambda x, a: a + x, (uniform, -1, 1), (uniform, -1, 1)),
    "x-a": (lambda x, a: x - a, (uniform, -1, 1), (uniform, -1, 1)),
    "a-x": (lambda x, a: a - x, (uniform, -1, 1), (uniform, -1, 1)),
    "x*a": (lambda x, a: x * a, (uniform, -1, 1), (uniform, -1, 1)),
    "a*x": (lambda x, a: a * x, (uniform, -1, 1), (uniform, -1, 1)),
    "x/a": (lambda x, a: x / a, (uniform, -1, 1), (away_from_zero, 0.5, 1.5)),
    "a/x": (lambda x, a: a / x, (away_from_zero, 0.5, 1.5), (uniform, -1, 1)),
    "x**a": (lambda x, a: x**a, (uniform, 0.5, 1.5), (uniform, -1.5, 1.5)),
    "a**x": (lambda x, a: a**x, (uniform, -1, 1), (uniform, 0.5, 1.5)),
}


class _ArrayCase(FunctionTestCase):
    def generate_inputs(self):
        _, (gen_x, low_x, high_x), (gen_a, low_a, high_a) = ARRAY_FORMS[self.form]
        shape_x, shape_a = self.shapes
        self.constant = gen_a(low_a, high_a, shape_a, self.dtype)
        return (gen_x(low_x, high_x, shape_x, self.dtype),)

    def forward(self, inputs, device):
        y = ARRAY_FORMS[self.form][0](inputs[0], device.send(self.constant))
        assert isinstance(y, Variable)
        return (y,)

    def forward_expected(self, inputs):
        return (ARRAY_FORMS[self.form][0](inputs[0], self.constant),)


_ARRAY_PARAMS = testing.product(
    {
        "form": list(ARRAY_FORMS),
        "shapes": [((3, 2), (3, 2)), ((3, 2), (2,)), ((2,), (3, 2))],
        "dtype": FLOATS,
    }
)


@testing.parameterize(*_ARRAY_PARAMS)
class TestArrayOperand(_ArrayCase):
    pass


# -- unary functions --------------------------------------------------------------------

UNARY = {
    "neg": (operator.neg, operator.neg, uniform, -1, 1),
    "abs": (abs, abs, away_from_zero, 0.1, 1),
    "absolute": (ops.absolute, numpy.abs, away_from_zero, 0.1, 1),
    "log": (ops.log, numpy.log, uniform, 0.5, 2),
}


@testing.parameterize(
    *testing.product(
        {
            "function": list(UNARY),
            "shape": [(3, 2), (), (2, 3, 4)],
            "dtype": FLOATS,
        }
    )
)
class TestUnary(FunctionTestCase):
    def generate_inputs(self):
        _, _, gen, low, high = UNARY[self.function]
        return (gen(low, high, self.shape, self.dtype),)

    def forward(self, inputs, device):
        return (UNARY[self.function][0](inputs[0]),)

    def forward_expected(self, inputs):
        return (numpy.asarray(UNARY[self.function][1](inputs[0])),)


# -- which FunctionNode each operator records ---------------------------------------------


@pytest.mark.parametrize(
    ("expression", "node_class"),
    [
        (lambda x, y, a: x + y, arithmetic.Add),
        (lambda x, y, a: x + 2, arithmetic.AddConstant),
        (lambda x, y, a: 2 + x, arithmetic.AddConstant),
        (lambda x, y, a: x + a, arithmetic.Add),
        (lambda x, y, a: a + x, arithmetic.Add),
        (lambda x, y, a: ops.add(x, y, x), arithmetic.MultiAdd),
        (lambda x, y, a: x - y, arithmetic.Sub),
        (lambda x, y, a: x - 2, arithmetic.AddConstant),
        (lambda x, y, a: 2 - x, arithmetic.SubFromConstant),
        (lambda x, y, a: a - x, arithmetic.Sub),
        (lambda x, y, a: x * y, arithmetic.Mul),
        (lambda x, y, a: x * 2, arithmetic.MulConstant),
        (lambda x, y, a: 2 * x, arithmetic.MulConstant),
        (lambda x, y, a: x / y, arithmetic.Div),
        (lambda x, y, a: x / 2, arithmetic.MulConstant),
        (lambda x, y, a: 2 / x, arithmetic.DivFromConstant),
        (lambda x, y, a: a / x, arithmetic.Div),
        (lambda x, y, a: x**y, arithmetic.PowVarVar),
        (lambda x, y, a: x**2, arithmetic.PowVarConst),
        (lambda x, y, a: 2**x, arithmetic.PowConstVar),
        (lambda x, y, a: a**x, arithmetic.PowVarVar),
        (lambda x, y, a: -x, arithmetic.Neg),
        (lambda x, y, a: abs(x), arithmetic.Absolute),
        (lambda x, y, a: ops.log(x), arithmetic.Log),
    ],
)
def test_operator_records_its_function_node(expression, node_class):
    x = Variable(numpy.array([1.5, 2.0], numpy.float32))
    y = Variable(numpy.array([0.5, 3.0], numpy.float32))
    a = numpy.array([2.5, 0.5], numpy.float32)
    out = expression(x, y, a)
    assert type(out.creator) is node_class
    assert out.dtype == numpy.float32


def test_scalar_operand_keeps_the_variable_dtype():
    x = Variable(numpy.array([1.0, 2.0], numpy.float16))
    for y in (x + 2.5, 2.5 - x, x * 3, x / 3, 3 / x, x**2.5, 2.5**x):
        assert y.dtype == numpy.float16


def test_array_operand_of_another_dtype_is_cast_to_the_variable_dtype():
    x = Variable(numpy.array([1.0, 2.0], numpy.float32))
    y = x + numpy.array([0.5, 0.25], numpy.float64)
    assert y.dtype == numpy.float32
    testing.assert_allclose(y, numpy.array([1.5, 2.25], numpy.float32), atol=0, rtol=0)


def test_pow_var_const_second_order_gradient_at_exponent_one_is_zero():
    x = Variable(numpy.array([0.5, -2.0]))
    (gx,) = grad([x**1], [x], enable_double_backprop=True)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(2))])
    assert ggx is None or not ggx.array.any()


# -- type checks and bad operands ----------------------------------------------------------


# The broadcasting binary operators and the nodes they name.
BINARY_OPS = [
    (operator.add, "Add"),
    (operator.sub, "Sub"),
    (operator.mul, "Mul"),
    (operator.truediv, "Div"),
]


@pytest.mark.parametrize(("op", "label"), [*BINARY_OPS, (operator.pow, "PowVarVar")])
def test_mismatched_dtypes_raise_invalid_type_naming_the_function(op, label):
    x = Variable(numpy.ones((2, 3), numpy.float32))
    y = Variable(numpy.ones((2, 3), numpy.float64))
    with pytest.raises(InvalidType) as info:
        op(x, y)
    message = str(info.value)
    assert label in message
    assert "lhs.dtype == rhs.dtype" in message
    assert "float32 != float64" in message


@pytest.mark.parametrize(("op", "label"), BINARY_OPS)
def test_incompatible_shapes_raise_invalid_type(op, label):
    x = Variable(numpy.ones((3, 2), numpy.float32))
    y = Variable(numpy.ones((4,), numpy.float32))
    with pytest.raises(InvalidType) as info:
        op(x, y)
    message = str(info.value)
    assert label in message
    assert "(3, 2)" in message and "(4,)" in message


def test_add_many_with_mismatched_dtypes_raises_invalid_type():
    x = Variable(numpy.ones(2, numpy.float32))
    with pytest.raises(InvalidType, match="MultiAdd"):
        ops.add(x, x, Variable(numpy.ones(2, numpy.float64)))


@pytest.mark.parametrize(
    ("expression", "label"),
    [
        (lambda x: x / x, "Div"),
        (lambda x: x**x, "PowVarVar"),
        (lambda x: x**2, "PowVarConst"),
        (lambda x: 2**x, "PowConstVar"),
        (lambda x: 2 / x, "DivFromConstant"),
        (lambda x: ops.log(x), "Log"),
        (lambda x: abs(x), "Absolute"),
    ],
)
def test_integer_input_to_float_only_functions_raises_invalid_type(expression, label):
    x = Variable(numpy.array([1, 2, 3], numpy.int32))
    with pytest.raises(InvalidType) as info:
        expression(x)
    message = str(info.value)
    assert label in message
    assert "dtype.kind == 'f'" in message
    assert "i != f" in message


@pytest.mark.parametrize(
    "op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]
)
@pytest.mark.parametrize("reflected", [False, True])
def test_list_operand_raises_type_error_naming_its_type(op, reflected):
    x = Variable(numpy.ones(3, numpy.float32))
    with pytest.raises(TypeError, match="got list"):
        op([1.0, 2.0, 3.0], x) if reflected else op(x, [1.0, 2.0, 3.0])


def test_string_operand_raises_type_error_naming_its_type():
    x = Variable(numpy.ones(3, numpy.float32))
    with pytest.raises(TypeError, match="got str"):
        x * "a"


# -- the tutorial's behaviours ----------------------------------------------------------------


def test_polynomial_gradient_at_five_is_eight():
    x = Variable(numpy.array(5.0, numpy.float32))
    y = x**2 - 2 * x + 1
    assert y.array == 16.0
    y.backward()
    assert x.grad.dtype == numpy.float32
    assert x.grad == 8.0


def test_double_backprop_of_cube_gives_six_x():
    data = numpy.array([-1.5, 0.5, 2.0])
    x = Variable(data)
    y = x**3
    y.grad = numpy.ones(3)
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    testing.assert_allclose(gx, 3 * data**2, atol=0, rtol=1e-12)
    x.cleargrad()
    gx.grad = numpy.ones(3)
    gx.backward()
    testing.assert_allclose(x.grad, 6 * data, atol=0, rtol=1e-12)


def test_without_double_backprop_the_gradient_has_no_graph():
    x = Variable(numpy.array(2.0))
    (x**3).backward()
    assert x.grad_var.creator is None


def test_retain_grad_keeps_intermediate_gradients():
    x = Variable(numpy.array([1.0, 2.0], numpy.float32))
    h = x * 3
    y = ops.sum(h * h)
    y.backward()
    assert h.grad is None
    h2 = x * 3
    y2 = ops.sum(h2 * h2)
    y2.backward(retain_grad=True)
    testing.assert_allclose(h2.grad, 2 * h2.array, atol=0, rtol=0)
    assert y2.grad == 1.0


def test_gradients_accumulate_until_cleargrad():
    x = Variable(numpy.array([1.0, -2.0], numpy.float32))
    for _ in range(3):
        ops.sum(x * x).backward()
    testing.assert_allclose(x.grad, 3 * 2 * x.array, atol=0, rtol=0)
    x.cleargrad()
    assert x.grad is None
    ops.sum(x * x).backward()
    testing.assert_allclose(x.grad, 2 * x.array, atol=0, rtol=0)


def test_a_variable_used_twice_receives_the_sum_of_both_gradients():
    x = Variable(numpy.array(3.0))
    y = x * x + x
    y.backward()
    assert x.grad == 7.0


@pytest.mark.parametrize(
    "op",
    [operator.mul, operator.truediv, lambda a, b: a**2, lambda a, b: a**3.5, lambda a, b: 2 / a],
    ids=["mul", "div", "pow2", "pow3.5", "rdiv"],
)
@pytest.mark.parametrize("shape_b", [(2, 3), (3,)])
@pytest.mark.parametrize("b_requires_grad", [True, False])
def test_backward_on_arrays_matches_the_recorded_backward(op, shape_b, b_requires_grad):
    # Without double backprop or hooks, these backwards compute on arrays; the
    # recorded path (enable_double_backprop) must give the same bits and flags.
    rng = numpy.random.default_rng(3)
    a_data = rng.uniform(0.5, 2.0, (2, 3)).astype(numpy.float32)
    b_data = rng.uniform(0.5, 2.0, shape_b).astype(numpy.float32)
    grads = []
    for double in (False, True):
        a, b = Variable(a_data), Variable(b_data, requires_grad=b_requires_grad)
        y = op(a, b)
        y.grad = numpy.full((2, 3), 0.5, numpy.float32)
        y.backward(enable_double_backprop=double)
        assert (a.grad_var.creator is not None) == double
        grads.append(
            [(g.array, g.requires_grad) for g in (a.grad_var, b.grad_var) if g is not None]
        )
    for (fast, fast_flag), (recorded, recorded_flag) in zip(*grads):
        assert fast.dtype == recorded.dtype and fast.shape == recorded.shape
        assert fast_flag == recorded_flag
        numpy.testing.assert_array_equal(fast, recorded)


def test_unary_plus_is_the_variable_itself():
    x = Variable(numpy.arange(3, dtype=numpy.float32))
    assert +x is x
    (g,) = grad([+x * 2.0], [x], [Variable(numpy.ones(3, numpy.float32))])
    testing.assert_allclose(g, numpy.full(3, 2.0), atol=0, rtol=0)


@pytest.mark.parametrize(
    "method, expected",
    [("__rsub__", -1.0), ("__rtruediv__", 2.0 / 3.0), ("__rpow__", 8.0)],
)
def test_reflected_operators_called_with_a_variable(method, expected):
    # b.__rsub__(a) is a - b, as when Python falls back to the reflected method.
    a = Variable(numpy.full(2, 2.0))
    b = Variable(numpy.full(2, 3.0))
    y = getattr(b, method)(a)
    testing.assert_allclose(y, numpy.full(2, expected), atol=0, rtol=1e-15)
    ga, gb = grad([y], [a, b], [Variable(numpy.ones(2))])
    assert ga is not None and gb is not None
