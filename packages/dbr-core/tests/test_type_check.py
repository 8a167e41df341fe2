import operator
import pickle

import numpy
import pytest

from dbr.core import type_check
from dbr.core.type_check import (
    BinaryOperator,
    Call,
    Constant,
    GetItem,
    InvalidType,
    Member,
    TypeInfo,
    TypeInfoTuple,
    UnaryOperator,
    Variable,
)


class SubclassedInvalidType(InvalidType):
    pass


@pytest.fixture
def abc():
    return Variable(7, "a"), Variable(3, "b"), Variable(2, "c")


def types_of(*arrays, names=None):
    in_types = type_check.get_types(arrays, "in_types", False)
    if names is not None:
        type_check.argname(in_types, names)
    return in_types


def failure(*conditions):
    with pytest.raises(InvalidType) as info:
        type_check.expect(*conditions)
    return info.value


class TestPrinting:
    @pytest.mark.parametrize(
        ("build", "text"),
        [
            (lambda a, b, c: (a + b) * c, "(a + b) * c"),
            (lambda a, b, c: a + b * c, "a + b * c"),
            (lambda a, b, c: a * b + c, "a * b + c"),
            (lambda a, b, c: a - b - c, "a - b - c"),
            (lambda a, b, c: a - (b - c), "a - (b - c)"),
            (lambda a, b, c: a - (b + c), "a - (b + c)"),
            (lambda a, b, c: a / (b * c), "a / (b * c)"),
            (lambda a, b, c: a // b % c, "a // b % c"),
            (lambda a, b, c: a % (b // c), "a % (b // c)"),
            (lambda a, b, c: a**b**c, "a ** b ** c"),
            (lambda a, b, c: (a**b) ** c, "(a ** b) ** c"),
            (lambda a, b, c: a ** (b * c), "a ** (b * c)"),
            (lambda a, b, c: a**-b, "a ** -b"),
            (lambda a, b, c: -(a**b), "-a ** b"),
            (lambda a, b, c: (-a) ** b, "(-a) ** b"),
            (lambda a, b, c: -(a + b), "-(a + b)"),
            (lambda a, b, c: operator.neg(-a), "-(-a)"),
            (lambda a, b, c: +a * ~b, "+a * ~b"),
            (lambda a, b, c: ~(a & b), "~(a & b)"),
            (lambda a, b, c: a | b & c, "a | b & c"),
            (lambda a, b, c: (a | b) & c, "(a | b) & c"),
            (lambda a, b, c: a ^ b | c, "a ^ b | c"),
            (lambda a, b, c: a ^ (b | c), "a ^ (b | c)"),
            (lambda a, b, c: a << b + c, "a << b + c"),
            (lambda a, b, c: (a << b) + c, "(a << b) + c"),
            (lambda a, b, c: a >> b >> c, "a >> b >> c"),
            (lambda a, b, c: a + b == c * 2, "a + b == c * 2"),
            (lambda a, b, c: (a == b) == c, "(a == b) == c"),
            (lambda a, b, c: (a < b) & (b < c), "(a < b) & (b < c)"),
            (lambda a, b, c: 2 - a, "2 - a"),
            (lambda a, b, c: 1.5 * a, "1.5 * a"),
            (lambda a, b, c: (-2) ** a, "(-2) ** a"),
            (lambda a, b, c: a - -2, "a - -2"),
            (lambda a, b, c: operator.lt(3, a), "a > 3"),
            (lambda a, b, c: a == "f", "a == 'f'"),
            (lambda a, b, c: a == (b, c + 1), "a == (b, c + 1)"),
            (lambda a, b, c: a == (1,), "a == (1,)"),
            (lambda a, b, c: a != [b, 2], "a != [b, 2]"),
            (lambda a, b, c: a.shape, "a.shape"),
            (lambda a, b, c: a.dtype.kind, "a.dtype.kind"),
            (lambda a, b, c: (a + b).real, "(a + b).real"),
            (lambda a, b, c: (-a).real, "(-a).real"),
            (lambda a, b, c: a[0], "a[0]"),
            (lambda a, b, c: a[-1], "a[-1]"),
            (lambda a, b, c: a[1:], "a[1:]"),
            (lambda a, b, c: a[:-1], "a[:-1]"),
            (lambda a, b, c: a[::2], "a[::2]"),
            (lambda a, b, c: a[b : c + 1], "a[b:c + 1]"),
            (lambda a, b, c: a[b, ...], "a[b, ...]"),
            (lambda a, b, c: a[b,], "a[b,]"),
            (lambda a, b, c: a[()], "a[()]"),
            (lambda a, b, c: (a * b)[c], "(a * b)[c]"),
            (lambda a, b, c: a.shape[b - 1], "a.shape[b - 1]"),
            (lambda a, b, c: a(), "a()"),
            (lambda a, b, c: a(b, 2, key="v"), "a(b, 2, key='v')"),
            (lambda a, b, c: a.reshape(b * c)[0], "a.reshape(b * c)[0]"),
            (lambda a, b, c: (a + b)(c), "(a + b)(c)"),
        ],
    )
    def test_str(self, abc, build, text):
        assert str(build(*abc)) == text

    @pytest.mark.parametrize(
        ("value", "text"),
        [
            (numpy.float32, "numpy.float32"),
            (numpy.dtype("int64"), "numpy.int64"),
            (numpy.dtype(">f4"), "numpy.dtype('>f4')"),
            (float, "float"),
            (None, "None"),
            ("fc", "'fc'"),
            ((2, 3), "(2, 3)"),
            ((), "()"),
        ],
    )
    def test_constant_is_written_as_python(self, value, text):
        assert str(Constant(value)) == text

    def test_node_classes(self, abc):
        a, b, _ = abc
        assert type(a + 1) is BinaryOperator
        assert type(-a) is UnaryOperator
        assert type(a == 1) is type_check.Testable
        assert type(a.shape) is Member
        assert type(a[1]) is GetItem
        assert type(a(1)) is Call
        assert type((a + 1)._rhs) is Constant

    def test_numpy_operand_on_the_left_defers_to_the_expression(self, abc):
        a = abc[0]
        condition = numpy.int64(7) == a
        assert isinstance(condition, type_check.Testable)
        type_check.expect(condition)
        total = numpy.float32(1) + a
        assert isinstance(total, BinaryOperator)
        assert total.eval() == 8

    def test_repr_names_class_and_expression(self, abc):
        a, b, _ = abc
        assert repr(a + b) == "<BinaryOperator a + b>"


class TestEval:
    @pytest.mark.parametrize(
        "op",
        [
            operator.add,
            operator.sub,
            operator.mul,
            operator.truediv,
            operator.floordiv,
            operator.mod,
            operator.pow,
            operator.and_,
            operator.or_,
            operator.xor,
            operator.lshift,
            operator.rshift,
            operator.eq,
            operator.ne,
            operator.lt,
            operator.le,
            operator.gt,
            operator.ge,
        ],
    )
    def test_binary(self, abc, op):
        a, b, _ = abc
        assert op(a, b).eval() == op(7, 3)
        assert op(a, 2).eval() == op(7, 2)
        assert op(9, b).eval() == op(9, 3)

    @pytest.mark.parametrize("op", [operator.neg, operator.pos, operator.invert])
    def test_unary(self, abc, op):
        assert op(abc[0]).eval() == op(7)

    def test_nested(self, abc):
        a, b, c = abc
        assert ((a + b) * c).eval() == 20
        assert (a - (b - c)).eval() == 6
        assert (a ** -(b - c)).eval() == pytest.approx(1 / 7)
        assert (-(a**c)).eval() == -49

    def test_member_getitem_call(self):
        x = Variable(numpy.zeros((2, 3, 4), numpy.float32), "x")
        assert x.shape.eval() == (2, 3, 4)
        assert x.dtype.kind.eval() == "f"
        assert x.shape[1:].eval() == (3, 4)
        assert x.shape[::-1][0].eval() == 4
        assert x.shape[Variable(1, "i") :].eval() == (3, 4)
        assert x.reshape(6, -1).shape.eval() == (6, 4)
        assert x.sum(axis=Variable(0, "i")).shape.eval() == (3, 4)

    def test_constant_evaluates_expressions_inside(self, abc):
        a, b, _ = abc
        assert Constant((a, [b + 1, 5])).eval() == (7, [4, 5])

    def test_module_eval(self, abc):
        assert type_check.eval(abc[0] * 2) == 14
        assert type_check.eval(5) == 5
        assert type_check.eval(None) is None

    def test_expressions_are_not_evaluated_until_asked(self):
        x = Variable(TypeInfo((3,), numpy.dtype("f")), "x")
        out_of_range = x.shape[5]
        assert str(out_of_range) == "x.shape[5]"
        with pytest.raises(IndexError):
            out_of_range.eval()


class TestExpect:
    @pytest.mark.parametrize(
        ("build", "expect", "actual"),
        [
            (lambda x: x.ndim == 2, "x.ndim == 2", "3 != 2"),
            (lambda x: x.ndim != 3, "x.ndim != 3", "3 == 3"),
            (lambda x: x.ndim < 3, "x.ndim < 3", "3 >= 3"),
            (lambda x: x.ndim <= 2, "x.ndim <= 2", "3 > 2"),
            (lambda x: x.ndim > 3, "x.ndim > 3", "3 <= 3"),
            (lambda x: x.ndim >= 4, "x.ndim >= 4", "3 < 4"),
            (lambda x: x.dtype.kind == "f", "x.dtype.kind == 'f'", "i != f"),
            (lambda x: x.dtype == numpy.float32, "x.dtype == numpy.float32", "int32 != float32"),
            (lambda x: x.shape == (2, 3), "x.shape == (2, 3)", "(2, 3, 4) != (2, 3)"),
            (lambda x: x.shape[-1] == 5, "x.shape[-1] == 5", "4 != 5"),
            (lambda x: x.size == 25, "x.size == 25", "24 != 25"),
            (
                lambda x: x.shape[0] * 2 == type_check.prod(x.shape[1:]),
                "x.shape[0] * 2 == prod(x.shape[1:])",
                "4 != 12",
            ),
        ],
    )
    def test_failing_comparison(self, build, expect, actual):
        (x,) = types_of(numpy.zeros((2, 3, 4), numpy.int32), names=("x",))
        error = failure(build(x))
        assert error.expect == expect
        assert error.actual == actual
        assert str(error) == f"Expect: {expect}\nActual: {actual}"

    @pytest.mark.parametrize(
        "build",
        [
            lambda x: x.ndim == 3,
            lambda x: x.ndim != 2,
            lambda x: x.ndim < 4,
            lambda x: x.ndim <= 3,
            lambda x: x.ndim > 2,
            lambda x: x.ndim >= 3,
            lambda x: x.dtype.kind == "i",
            lambda x: x.dtype == numpy.int32,
            lambda x: x.dtype == numpy.dtype("i4"),
            lambda x: numpy.dtype("i4") == x.dtype,
            lambda x: x.shape == (2, 3, 4),
            lambda x: x.size == 24,
        ],
    )
    def test_passing_comparison(self, build):
        (x,) = types_of(numpy.zeros((2, 3, 4), numpy.int32), names=("x",))
        type_check.expect(build(x))

    def test_stops_at_first_failure(self):
        (x,) = types_of(numpy.zeros((2, 3)), names=("x",))
        error = failure(x.ndim == 2, x.shape[0] == 5, x.shape[7] == 1)
        assert error.expect == "x.shape[0] == 5"

    def test_compares_two_inputs(self):
        x, w = types_of(numpy.zeros((2, 3)), numpy.zeros((4, 5)), names=("x", "W"))
        type_check.expect(x.shape[0] < w.shape[0])
        error = failure(x.shape[1] == w.shape[1])
        assert str(error) == "Expect: x.shape[1] == W.shape[1]\nActual: 3 != 5"

    def test_plain_bools(self):
        type_check.expect(True, numpy.bool_(True), 1 == 1)
        error = failure(True, False)
        assert error.expect == "argument 2 of type_check.expect() is true"
        assert error.actual == "False"
        assert failure(numpy.bool_(False)).actual == "False"

    def test_other_expression_is_tested_for_truth(self):
        (x,) = types_of(numpy.zeros((2, 3)), names=("x",))
        type_check.expect((x.ndim == 2) | (x.ndim == 3))
        error = failure((x.ndim == 1) | (x.ndim == 3))
        assert error.expect == "(x.ndim == 1) | (x.ndim == 3)"
        assert error.actual == "False"

    def test_testable_expect_method(self):
        (x,) = types_of(numpy.zeros((5,)), names=("x",))
        (x.shape[0] == 5).expect()
        with pytest.raises(InvalidType, match="x.shape\\[0\\] == 4"):
            (x.shape[0] == 4).expect()


class TestArgname:
    def test_renames_in_messages(self):
        in_types = types_of(numpy.zeros((2, 3)), numpy.zeros((4, 5)))
        assert failure(in_types[0].ndim == 1).expect == "in_types[0].ndim == 1"
        type_check.argname(in_types, ("x", "W"))
        assert failure(in_types[0].ndim == 1).expect == "x.ndim == 1"
        assert failure(in_types[1].shape[1] == 2).expect == "W.shape[1] == 2"

    def test_renames_expressions_built_before(self):
        in_types = types_of(numpy.zeros((2, 3)))
        condition = in_types[0].ndim == 1
        type_check.argname(in_types, ("x",))
        assert str(condition) == "x.ndim == 1"

    def test_fewer_names_leave_the_rest(self):
        in_types = types_of(numpy.zeros(2), numpy.zeros(3), numpy.zeros(4))
        type_check.argname(in_types, ("x", "W"))
        assert [str(t) for t in in_types] == ["x", "W", "in_types[2]"]

    def test_more_names_than_types(self):
        in_types = types_of(numpy.zeros(2))
        type_check.argname(in_types, ("x", "W", "b"))
        assert [str(t) for t in in_types] == ["x"]

    def test_light_types_are_left_alone(self):
        x = numpy.zeros(2)
        in_types = type_check.light_types((x,))
        type_check.argname(in_types, ("x",))
        assert in_types[0] is x


class TestNoTruthValue:
    def test_if(self, abc):
        with pytest.raises(RuntimeError, match=r"`a == 1` has no truth value.*expect"):
            if abc[0] == 1:
                pass

    def test_and_not(self, abc):
        a, b, _ = abc
        with pytest.raises(RuntimeError):
            _ = a == 1 and b == 1
        with pytest.raises(RuntimeError):
            _ = not a

    def test_names_the_function_being_checked(self, abc):
        class Linear:
            label = "LinearFunction"

        context = type_check.get_function_check_context(Linear())
        with pytest.raises(RuntimeError, match="checking the types of LinearFunction"), context:
            bool(abc[0] > 0)

    def test_iteration_and_in_are_refused(self, abc):
        a = abc[0]
        with pytest.raises(TypeError, match="cannot be iterated"):
            tuple(a.shape)
        with pytest.raises(TypeError, match="in operator"):
            _ = 1 in a.shape

    def test_private_attributes_are_not_members(self, abc):
        with pytest.raises(AttributeError):
            _ = abc[0]._missing
        with pytest.raises(TypeError):
            hash(abc[0])


class TestTypes:
    @pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64, numpy.int8])
    @pytest.mark.parametrize("shape", [(), (3,), (2, 0), (2, 3, 4)])
    def test_get_types(self, dtype, shape):
        array = numpy.zeros(shape, dtype)
        in_types = type_check.get_types((array, array.T), "in_types", False)
        assert isinstance(in_types, TypeInfoTuple)
        assert in_types.name == "in_types"
        assert len(in_types) == 2
        first, second = in_types
        assert isinstance(first, Variable)
        assert str(first) == "in_types[0]"
        assert str(second) == "in_types[1]"
        info = first.eval()
        assert info.shape == shape
        assert info.dtype == numpy.dtype(dtype)
        assert info.ndim == len(shape)
        assert info.size == array.size
        assert second.shape.eval() == shape[::-1]
        type_check.expect(first.dtype == dtype, first.ndim == len(shape))

    def test_size(self):
        in_types = types_of(numpy.zeros(1), numpy.zeros(2))
        size = in_types.size()
        assert isinstance(size, Variable)
        assert size.eval() == 2
        type_check.expect(in_types.size() == 2)
        error = failure(in_types.size() == 3)
        assert str(error) == "Expect: in_types.size() == 3\nActual: 2 != 3"
        assert types_of().size().eval() == 0

    def test_size_names_the_tuple(self):
        out_types = type_check.get_types((numpy.zeros(1),), "out_types", False)
        assert str(out_types.size()) == "out_types.size()"

    def test_none(self):
        in_types = type_check.get_types((numpy.zeros(2), None), "grads", True)
        info = in_types[1].eval()
        assert info.shape == ()
        assert info.dtype is None
        with pytest.raises(TypeError, match=r"in_types\[1\] is None"):
            type_check.get_types((numpy.zeros(2), None), "in_types", False)

    def test_not_an_array(self):
        with pytest.raises(TypeError, match=r"in_types\[0\] must be an array, not list"):
            type_check.get_types(([1, 2],), "in_types", False)

    def test_duck_typed_array(self):
        class DeviceArray:
            shape = (4, 5)
            dtype = numpy.dtype("float16")

        (x,) = type_check.get_types((DeviceArray(),), "in_types", False)
        type_check.expect(x.shape == (4, 5), x.dtype == numpy.float16)

    def test_shapes_override(self):
        (x,) = type_check.get_types((numpy.zeros(2),), "in_types", False, shapes=((3, 1),))
        assert x.shape.eval() == (3, 1)
        assert x.ndim.eval() == 2

    def test_type_info_repr(self):
        info = TypeInfo((2, 3), numpy.dtype("float32"))
        assert repr(info) == "TypeInfo(shape=(2, 3), dtype=float32)"


class TestLightTypes:
    def test_plain_values(self):
        in_types = type_check.light_types((numpy.zeros((2, 3), numpy.float32), numpy.zeros(4)))
        x, w = in_types
        assert in_types.size() == 2
        assert x.dtype == numpy.float32
        assert type_check.prod(x.shape) == 6
        type_check.expect(x.ndim == 2, in_types.size() == 2)
        assert failure(x.ndim == 2, w.ndim == 2).expect == (
            "argument 2 of type_check.expect() is true"
        )

    def test_light_mode_is_gone(self):
        # light_types is the one fast path; the thread-local light mode was dropped.
        assert not hasattr(type_check, "light_mode")
        assert not hasattr(type_check, "in_light_mode")


def test_function_check_context_restores_previous():
    class F:
        label = "F"

    class G:
        label = "G"

    a = Variable(1, "a")
    with type_check.get_function_check_context(F()):
        with (
            type_check.get_function_check_context(G()),
            pytest.raises(RuntimeError, match="types of G"),
        ):
            bool(a == 1)
        with pytest.raises(RuntimeError, match="types of F"):
            bool(a == 1)
    with pytest.raises(RuntimeError) as info:
        bool(a == 1)
    assert "checking the types" not in str(info.value)


class TestInvalidType:
    def test_message(self):
        error = InvalidType("x.ndim == 2", "3 != 2")
        assert isinstance(error, Exception)
        assert error.expect == "x.ndim == 2"
        assert error.actual == "3 != 2"
        assert error.msg is None
        assert str(error) == "Expect: x.ndim == 2\nActual: 3 != 2"

    def test_custom_message(self):
        error = InvalidType("a", "b", msg="in Linear")
        assert str(error) == "in Linear"
        assert (error.expect, error.actual) == ("a", "b")

    @pytest.mark.parametrize("msg", [None, "Invalid operation is performed in: F"])
    def test_pickle(self, msg):
        error = InvalidType("x.ndim == 2", "3 != 2", msg=msg)
        restored = pickle.loads(pickle.dumps(error))
        assert type(restored) is InvalidType
        assert (restored.expect, restored.actual, restored.msg) == ("x.ndim == 2", "3 != 2", msg)
        assert str(restored) == str(error)

    def test_pickle_subclass(self):
        restored = pickle.loads(pickle.dumps(SubclassedInvalidType("e", "a")))
        assert type(restored) is SubclassedInvalidType
        assert str(restored) == "Expect: e\nActual: a"


class TestProd:
    def test_expression(self):
        (x,) = types_of(numpy.zeros((2, 3, 4)), names=("x",))
        product = type_check.prod(x.shape[1:])
        assert str(product) == "prod(x.shape[1:])"
        assert product.eval() == 12
        assert type_check.prod(x.shape).eval() == 24
        assert type_check.prod(x.shape[3:]).eval() == 1

    def test_plain(self):
        assert type_check.prod((2, 3, 4)) == 24
        assert type_check.prod(()) == 1


def test_make_variable():
    v = type_check.make_variable(numpy.dtype("int16"), "dt")
    assert isinstance(v, Variable)
    assert str(v.kind) == "dt.kind"
    assert v.kind.eval() == "i"
    assert failure(v.itemsize == 4).actual == "2 != 4"


class TestSameTypes:
    def test_numpy(self):
        assert type_check.same_types(numpy.zeros(2), numpy.ones((3, 3)))
        assert type_check.same_types(numpy.zeros(2), numpy.float32(1))
        assert type_check.same_types()
        assert type_check.same_types(numpy.zeros(1))

    def test_other_array_type(self):
        class DeviceArray:
            pass

        assert type_check.same_types(DeviceArray(), DeviceArray())
        assert not type_check.same_types(numpy.zeros(2), DeviceArray())
        assert not type_check.same_types(DeviceArray(), numpy.zeros(2))
        assert not type_check.same_types(numpy.zeros(2), [1.0])


class TestBroadcast:
    @pytest.mark.parametrize(
        "shapes",
        [
            [(2, 3), (3,)],
            [(2, 1, 4), (3, 1)],
            [(5,), (1,), ()],
            [(0, 3), (1, 3)],
        ],
    )
    def test_pass(self, shapes):
        in_types = types_of(*[numpy.zeros(s) for s in shapes])
        type_check.expect_broadcast_shapes(*[t.shape for t in in_types])
        type_check.expect_broadcast_shapes(*shapes)

    def test_fail_names_shapes(self):
        x, y = types_of(numpy.zeros((2, 3)), numpy.zeros((4,)), names=("x", "y"))
        with pytest.raises(InvalidType) as info:
            type_check.expect_broadcast_shapes(x.shape, y.shape)
        assert info.value.expect == "shapes can be broadcast together: x.shape, y.shape"
        assert info.value.actual == "cannot broadcast: x.shape = (2, 3), y.shape = (4,)"

    def test_fail_plain_shapes(self):
        with pytest.raises(InvalidType) as info:
            type_check.expect_broadcast_shapes((2, 3), (2,))
        assert info.value.actual == "cannot broadcast: (2, 3), (2,)"

    def test_allow_none(self):
        type_check.expect_broadcast_shapes((2, 3), None, (3,), allow_none=True)
        with pytest.raises(TypeError):
            type_check.expect_broadcast_shapes((2, 3), None)

    def test_light_types(self):
        x, y = type_check.light_types((numpy.zeros((2, 3)), numpy.zeros((2,))))
        with pytest.raises(InvalidType, match=r"\(2, 3\), \(2,\)"):
            type_check.expect_broadcast_shapes(x.shape, y.shape)
