import copy
import re

import numpy
import pytest

from dbr.core import Parameter, Variable, VariableNode, as_array, as_variable, initializers, ops
from dbr.core.backend import cpu
from dbr.core.configuration import using_config


def f32(*values):
    return numpy.array(values, dtype=numpy.float32)


# -- construction and type errors ------------------------------------------------


def test_construction_keeps_the_array_and_options():
    a = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    g = numpy.ones((2, 3), numpy.float32)
    v = Variable(a, name="v", grad=g, requires_grad=False)
    assert v.array is a and v.data is a
    assert v.grad is g
    assert v.grad_var.array is g and v.grad_var.creator is None
    assert v.name == "v"
    assert v.requires_grad is False
    assert Variable().array is None
    assert Variable().requires_grad is True


@pytest.mark.parametrize(
    ("data", "type_name"),
    [
        ([1.0, 2.0], "builtins.list"),
        (numpy.float32(1.0), "numpy.float32"),
        (3.0, "builtins.float"),
    ],
)
def test_data_must_be_an_array(data, type_name):
    with pytest.raises(TypeError) as info:
        Variable(data)
    message = str(info.value)
    assert message.startswith("Variable: expected data to be numpy.ndarray or cupy.ndarray")
    assert message.endswith(f"got {type_name}")


def test_setting_array_checks_the_type_too():
    v = Variable(f32(1.0))
    with pytest.raises(TypeError, match=r"Variable\.array: expected data.*got builtins\.list"):
        v.array = [1.0]
    v.data = f32(2.0, 3.0)
    assert v.shape == (2,)


def test_name_must_be_a_string():
    with pytest.raises(TypeError, match="Variable: expected name to be a str or None.*int"):
        Variable(f32(1.0), name=3)


@pytest.mark.parametrize(
    ("grad", "error", "message"),
    [
        (
            numpy.zeros((3, 2), numpy.float32),
            ValueError,
            "expected an array of shape (2, 3) (the data's), got shape (3, 2)",
        ),
        (
            numpy.zeros((2, 3), numpy.float64),
            TypeError,
            "expected an array of dtype float32 (the data's), got dtype float64",
        ),
    ],
)
def test_grad_must_match_the_shape_and_dtype(grad, error, message):
    # As in Chainer: a dtype mismatch is a TypeError, a shape mismatch a ValueError.
    v = Variable(numpy.zeros((2, 3), numpy.float32))
    with pytest.raises(error) as info:
        v.grad = grad
    assert str(info.value) == f"Variable.grad: {message}"
    with pytest.raises(error, match=re.escape(message)):
        Variable(numpy.zeros((2, 3), numpy.float32), grad=grad)
    assert v.grad is None


def test_grad_must_be_an_array_and_grad_var_a_variable():
    v = Variable(f32(1.0))
    with pytest.raises(TypeError, match=r"Variable\.grad: expected data.*got builtins\.list"):
        v.grad = [1.0]
    with pytest.raises(TypeError, match=r"Variable\.grad_var: expected a Variable or None"):
        v.grad_var = f32(1.0)
    g = Variable(f32(5.0))
    v.grad_var = g
    assert v.grad_var is g and v.grad[0] == 5.0
    v.grad = None
    assert v.grad_var is None


def test_truth_value_and_comparisons_raise():
    v = Variable(f32(1.0))
    # TypeErrors, and unhashable, as in Chainer.
    with pytest.raises(TypeError, match="cannot be evaluated as Python bool"):
        bool(v)
    with pytest.raises(TypeError, match=r"do not support the == operator.*v\.array"):
        v == v  # noqa: B015
    for op, compare in zip(
        ("!=", "<", "<=", ">", ">="), (v.__ne__, v.__lt__, v.__le__, v.__gt__, v.__ge__)
    ):
        with pytest.raises(TypeError, match=f"the {re.escape(op)} operator"):
            compare(v)
    with pytest.raises(TypeError, match="^unhashable type: "):
        hash(v)


# -- array-like attributes ---------------------------------------------------------


def test_array_attributes_and_shape_functions():
    a = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    v = Variable(a)
    assert (v.shape, v.ndim, v.size, v.dtype, len(v)) == ((2, 3), 2, 6, numpy.float32, 2)
    assert Variable(f32(4.0)).item() == 4.0
    numpy.testing.assert_array_equal(v.T.array, a.T)
    numpy.testing.assert_array_equal(v.transpose().array, a.T)
    numpy.testing.assert_array_equal(v.transpose(1, 0).array, a.T)
    numpy.testing.assert_array_equal(v.reshape(3, 2).array, a.reshape(3, 2))
    numpy.testing.assert_array_equal(v.reshape((6,)).array, a.ravel())
    assert v.reshape(-1).creator.label == "Reshape"
    assert v.xp is numpy and v.device is cpu


def test_operators_build_the_graph():
    x = Variable(f32(1.0, 2.0))
    two = f32(2.0, 2.0)
    # Labels are Chainer's: the operator with its operands, constants written in.
    cases = {
        "_ + _": x + x,
        "_ + 1.0": x + 1.0,
        "_ - _": x - x,
        "(-2.5) - _": -2.5 - x,
        "_ * _": x * two,
        "_ * 2.0": 2.0 * x,
        "_ / _": x / x,
        "1.0 / _": 1.0 / x,
        "_ ** 2": x**2,
        "_ ** _": x**x,
        "2.0 ** _": 2.0**x,
        "__neg__": -x,
        "|_|": abs(x),
        "GetItem": x[1:],
        "MatMul": x @ x,
    }
    for label, y in cases.items():
        assert y.creator.label == label


# -- text --------------------------------------------------------------------------


def test_label_names_shape_and_dtype():
    assert Variable(numpy.zeros((2, 3), numpy.float32)).label == "(2, 3), float32"
    assert Variable(numpy.zeros(4, numpy.float64)).label == "(4), float64"
    assert Variable(numpy.zeros((), numpy.float16)).label == "float16"
    assert Variable().label == "(unknown)"


def test_summary_names_the_variable_or_its_address():
    v = Variable(f32(1.0), name="w")
    assert v.summary() == "<variable w>"
    u = Variable(f32(1.0))
    assert u.summary() == f"<variable at 0x{id(u):x}>"


def test_debug_print_lists_device_shape_dtype_and_statistics():
    a = f32(1.0, 2.0, 3.0, 4.0)
    v = Variable(a, name="v")
    assert v.debug_print().splitlines() == [
        "<variable v>",
        "- device: CPU",
        "- backend: <class 'numpy.ndarray'>",
        "- shape: (4,)",
        "- dtype: float32",
        f"- statistics: mean={a.mean():.8f}, std={a.std():.8f}",
        "- grad: None",
    ]
    v.grad = f32(1.0, 1.0, 3.0, 3.0)
    assert v.debug_print().splitlines()[-1] == "- grad: mean=2.00000000, std=1.00000000"
    with pytest.warns(DeprecationWarning, match="zerograd is deprecated"):
        v.zerograd()
    assert v.debug_print().splitlines()[-1] == "- grad: 0"
    empty = Variable(name="e").debug_print().splitlines()
    assert empty[1:] == [f"- {k}: None" for k in ("device", "backend", "shape", "dtype")] + [
        "- statistics: None",
        "- grad: None",
    ]


def test_repr_and_str_show_the_data():
    v = Variable(f32(1.0, 2.0))
    assert repr(v) == "variable([1., 2.])"
    assert str(v) == "variable([1. 2.])"
    assert repr(Variable(f32(1.0), name="x")) == "variable x([1.])"
    assert repr(Variable()) == "variable(None)"
    assert repr(Variable(numpy.zeros((0, 3), numpy.float32))) == "variable([], shape=(0, 3))"
    multi = repr(Variable(numpy.zeros((2, 2), numpy.float32)))
    assert multi == "variable([[0., 0.],\n          [0., 0.]])"
    # str, like numpy's, does not name the shape of an empty array.
    assert str(Variable(numpy.zeros((0, 0), numpy.float32), name="x")) == "variable x([])"


# -- gradients -------------------------------------------------------------------


def test_cleargrad_zerograd_addgrad():
    v = Variable(f32(1.0, 2.0))
    with pytest.warns(DeprecationWarning, match="zerograd is deprecated"):
        v.zerograd()
    numpy.testing.assert_array_equal(v.grad, [0.0, 0.0])
    other = Variable(f32(0.0, 0.0), grad=f32(3.0, 4.0))
    v.addgrad(other)
    v.addgrad(other)
    numpy.testing.assert_array_equal(v.grad, [6.0, 8.0])
    numpy.testing.assert_array_equal(other.grad, [3.0, 4.0])
    v.cleargrad()
    assert v.grad is None
    v.addgrad(other)
    assert v.grad is not other.grad
    numpy.testing.assert_array_equal(v.grad, [3.0, 4.0])
    v.addgrad(Variable(f32(0.0, 0.0)))  # no gradient: nothing to add
    numpy.testing.assert_array_equal(v.grad, [3.0, 4.0])


def test_copydata_copies_in_place():
    a = f32(0.0, 0.0)
    v = Variable(a)
    v.copydata(Variable(f32(1.0, 2.0)))
    assert v.array is a
    numpy.testing.assert_array_equal(a, [1.0, 2.0])
    empty = Variable()
    src = f32(5.0)
    empty.copydata(Variable(src))
    assert empty.array is not src
    numpy.testing.assert_array_equal(empty.array, [5.0])


def test_retain_data_keeps_the_array_in_the_node():
    v = Variable(f32(1.0))
    node = v.node
    assert isinstance(node, VariableNode) and node.data is None
    v.retain_data()
    assert node.data is v.array
    assert v.node is node


# -- device ----------------------------------------------------------------------


def test_to_device_numpy_keeps_arrays_and_gradients():
    a = f32(1.0, 2.0)
    v = Variable(a, grad=f32(3.0, 4.0))
    v.to_device("@numpy")
    assert v.array is a
    numpy.testing.assert_array_equal(v.grad, [3.0, 4.0])
    v.to_cpu()
    assert v.array is a
    assert v.device is cpu and v.xp is numpy


# -- copying ---------------------------------------------------------------------


def _named_double_with_grad():
    """``y = 2 x`` (x a named leaf), named ``"y"`` and given a gradient: what the copies copy."""
    x = Variable(f32(1.0, 2.0), name="x")
    y = x * 2.0
    y.name = "y"
    y.grad = f32(1.0, 1.0)
    return y


def test_copy_shares_the_arrays_in_a_new_leaf():
    y = _named_double_with_grad()
    c = copy.copy(y)
    assert type(c) is Variable
    assert c.array is y.array and c.grad is y.grad
    assert c.name == "y"
    assert c.node is not y.node
    assert c.creator is None and y.creator is not None


def test_deepcopy_gives_a_new_leaf_with_copied_arrays():
    y = _named_double_with_grad()
    d = copy.deepcopy(y)
    assert d.array is not y.array and d.grad is not y.grad
    numpy.testing.assert_array_equal(d.array, y.array)
    numpy.testing.assert_array_equal(d.grad, y.grad)
    assert d.name == "y"
    assert d.creator is None
    assert d.node is not y.node


def test_copying_a_parameter_keeps_its_class_and_initializer():
    p = Parameter(initializers.Constant(2.0), shape=(2,), name="p")
    p.update_rule = {"lr": 0.1}
    shallow = copy.copy(p)
    assert type(shallow) is Parameter
    assert shallow.array is p.array and shallow.initializer is p.initializer
    deep = copy.deepcopy(p)
    assert type(deep) is Parameter and deep.name == "p"
    assert deep.array is not p.array
    numpy.testing.assert_array_equal(deep.array, [2.0, 2.0])
    assert numpy.isnan(deep.grad).all() and deep.grad is not p.grad
    assert isinstance(deep.initializer, initializers.Constant)
    assert deep.update_rule == {"lr": 0.1} and deep.update_rule is not p.update_rule


def test_deepcopy_of_an_uninitialized_parameter_stays_lazy():
    p = Parameter(initializers.One())
    deep = copy.deepcopy(p)
    assert deep.array is None and not deep.is_initialized
    deep.initialize((3,))
    numpy.testing.assert_array_equal(deep.array, [1.0, 1.0, 1.0])
    assert p.array is None


# -- Parameter -------------------------------------------------------------------


def test_parameter_without_shape_is_uninitialized():
    p = Parameter()
    assert p.array is None
    with pytest.raises(RuntimeError, match="cleargrad"):
        p.grad  # noqa: B018  (never cleared: Chainer's RuntimeError)
    p.cleargrad()
    assert p.grad is None
    assert not p.is_initialized
    assert p.dtype == numpy.float32
    with using_config("dtype", numpy.float16):
        assert p.dtype == numpy.float16
    assert Parameter(initializers.Constant(1.0, dtype=numpy.float64)).dtype == numpy.float64
    assert p.update_rule is None


def test_initialize_fills_the_array_and_gives_a_nan_grad():
    p = Parameter(initializers.Constant(3.0))
    p.initialize((2, 3))
    assert p.is_initialized
    numpy.testing.assert_array_equal(p.array, numpy.full((2, 3), 3.0, numpy.float32))
    assert p.grad.shape == (2, 3) and p.grad.dtype == numpy.float32
    assert numpy.isnan(p.grad).all()


def test_initialize_uses_the_dtype_configured_at_initialization():
    p = Parameter(initializers.Zero())
    with using_config("dtype", numpy.float64):
        p.initialize((2,))
    assert p.array.dtype == numpy.float64 and p.grad.dtype == numpy.float64


def test_default_initializer_is_nan():
    p = Parameter()
    p.initialize((2,))
    assert numpy.isnan(p.array).all() and numpy.isnan(p.grad).all()


def test_parameter_with_shape_is_initialized_with_a_nan_grad():
    p = Parameter(initializers.One(), shape=(2, 2))
    numpy.testing.assert_array_equal(p.array, numpy.ones((2, 2), numpy.float32))
    assert numpy.isnan(p.grad).all() and p.grad.shape == (2, 2)
    scalar = Parameter(5.0, shape=(3,))
    numpy.testing.assert_array_equal(scalar.array, [5.0, 5.0, 5.0])
    assert isinstance(scalar.initializer, initializers.Constant)


def test_parameter_from_an_array_uses_it_as_the_data():
    a = numpy.zeros(3, numpy.float64)
    p = Parameter(a)
    assert p.array is a
    assert p.grad is None
    assert p.dtype == numpy.float64
    assert isinstance(p.initializer, initializers.Constant)


def test_cleargrad_before_initialize_keeps_grad_none():
    p = Parameter(initializers.One())
    p.cleargrad()
    p.initialize((2,))
    assert p.grad is None
    numpy.testing.assert_array_equal(p.array, [1.0, 1.0])


def test_zerograd_before_initialize_gives_zeros():
    p = Parameter(initializers.One())
    with pytest.warns(DeprecationWarning, match="zerograd is deprecated"):
        p.zerograd()
    assert p.grad is None
    p.initialize((2,))
    numpy.testing.assert_array_equal(p.grad, [0.0, 0.0])


def test_parameter_update_calls_its_rule():
    calls = []

    class Rule:
        def update(self, param):
            calls.append(param)

    p = Parameter(initializers.One(), shape=(1,))
    p.update()
    assert calls == []
    p.update_rule = Rule()
    p.update()
    assert calls == [p]


def test_parameter_takes_part_in_backprop():
    p = Parameter(initializers.Constant(2.0), shape=(2,))
    p.cleargrad()
    ops.sum(p * p).backward()
    numpy.testing.assert_array_equal(p.grad, [4.0, 4.0])


# -- helpers ---------------------------------------------------------------------


def test_as_variable_and_as_array():
    a = f32(1.0)
    v = as_variable(a)
    assert isinstance(v, Variable) and v.array is a and v.requires_grad is False
    assert as_variable(v) is v
    assert as_array(v) is a
    assert as_array(a) is a


@pytest.mark.parametrize(
    "data",
    [numpy.array([1, 2], dtype=object), numpy.array(["a", "b"]), numpy.array([b"a"])],
    ids=["object", "str", "bytes"],
)
def test_variable_refuses_arrays_that_are_not_numeric(data):
    message = f"expected an array of a bool or numeric dtype, got an array of dtype {data.dtype}"
    with pytest.raises(TypeError, match=re.escape(f"Variable: {message}")):
        Variable(data)
    v = Variable(numpy.zeros(2, numpy.float32))
    with pytest.raises(TypeError, match=re.escape(f"Variable.array: {message}")):
        v.array = data
    assert v.array.dtype == numpy.float32


@pytest.mark.parametrize("dtype", [numpy.bool_, numpy.int8, numpy.uint32, numpy.float16, complex])
def test_variable_accepts_bool_and_numeric_arrays(dtype):
    assert Variable(numpy.zeros(2, dtype)).dtype == dtype


def test_from_array_wraps_the_array_unchecked():
    a = numpy.arange(3, dtype=numpy.float32)
    v = Variable.from_array(a, False)
    assert type(v) is Variable and v.array is a
    assert not v.requires_grad and v.grad is None and v.name is None and v.creator is None
    assert Variable.from_array(a).requires_grad


def test_loss_scale_is_public_and_read_only():
    x = Variable(numpy.array([1.0, 2.0], numpy.float32))
    assert x.loss_scale is None
    ops.sum(x * x).backward(loss_scale=4.0)
    assert x.loss_scale == 4.0
    with pytest.raises(AttributeError):
        x.loss_scale = 2.0


# -- mean ----------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_matches_numpy(axis, keepdims):
    x = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 4)).astype(numpy.float32)
    y = Variable(x).mean(axis=axis, keepdims=keepdims)
    expected = x.mean(axis=axis, keepdims=keepdims)
    assert y.dtype == numpy.float32 and y.shape == expected.shape
    numpy.testing.assert_allclose(y.array, expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
@pytest.mark.parametrize("axis", [None, 1, -2])
@pytest.mark.parametrize("keepdims", [False, True])
def test_weighted_mean_matches_numpy_average(dtype, axis, keepdims):
    rng = numpy.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(dtype)
    w = rng.uniform(0.5, 2, x.shape if axis is None else (3,)).astype(dtype)
    y = Variable(x).mean(axis=axis, weights=w, keepdims=keepdims)
    expected = numpy.average(x.astype(numpy.float64), axis=axis, weights=w.astype(numpy.float64))
    if keepdims:
        expected = expected.reshape(
            [1 if axis is None or i == 1 else n for i, n in enumerate(x.shape)]
        )
    assert y.dtype == dtype and y.shape == numpy.shape(expected)
    tol = 5e-3 if dtype == numpy.float16 else 1e-6
    numpy.testing.assert_allclose(y.array, expected, rtol=tol, atol=tol)


def test_mean_gradients_flow_to_the_variable_and_the_weights():
    from dbr.core.gradient_check import check_backward, check_double_backward

    rng = numpy.random.default_rng(2)
    x = rng.uniform(-1, 1, (3, 4))
    w = rng.uniform(0.5, 2, (4,))
    gy = rng.uniform(-1, 1, (3,))
    check_backward(lambda x, w: Variable.mean(x, axis=1, weights=w), (x, w), gy)
    check_backward(lambda x: Variable.mean(x, axis=0), (x,), rng.uniform(-1, 1, (4,)))
    check_double_backward(
        lambda x, w: Variable.mean(x * x, axis=1, weights=w), (x, w), gy, (x * 0 + 1, w * 0 + 1)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"axis": 3}, ValueError, r"Variable\.mean: expected distinct axes in \[-2, 2\), got 3"),
        ({"axis": (0, 0)}, ValueError, r"expected distinct axes"),
        ({"axis": "0"}, TypeError, r"expected axis to be None, an int or a tuple of ints"),
        (
            {"axis": (0, 1), "weights": numpy.ones(3, numpy.float32)},
            ValueError,
            r"expected axis to be None or a single axis when weights are given, got \(0, 1\)",
        ),
        (
            {"axis": 1, "weights": numpy.ones(4, numpy.float32)},
            ValueError,
            r"expected 1-D weights of length 3 for axis 1, got shape \(4,\)",
        ),
        (
            {"weights": numpy.ones(3, numpy.float32)},
            ValueError,
            r"expected weights of shape \(2, 3\) \(axis None\), got \(3,\)",
        ),
        (
            {"weights": numpy.ones((2, 3))},
            TypeError,
            r"expected weights of dtype float32, got float64",
        ),
    ],
)
def test_mean_refuses_bad_arguments_naming_them(kwargs, error, message):
    with pytest.raises(error, match=message):
        Variable(numpy.ones((2, 3), numpy.float32)).mean(**kwargs)


def test_mean_refuses_integer_variables():
    with pytest.raises(
        TypeError, match=r"Variable\.mean: expected a floating Variable, got dtype int32"
    ):
        Variable(numpy.ones(3, numpy.int32), requires_grad=False).mean()


# -- pickling ------------------------------------------------------------------------


def test_pickle_drops_the_graph_and_keeps_data_grad_and_name():
    import pickle

    x = Variable(f32(1, 2, 3), name="x")
    y = x * x
    y.name = "y"
    y.grad = f32(1, 1, 1)
    assert y.creator is not None
    z = pickle.loads(pickle.dumps(y, pickle.HIGHEST_PROTOCOL))
    assert type(z) is Variable and z.name == "y" and z.creator is None
    numpy.testing.assert_array_equal(z.array, y.array)
    numpy.testing.assert_array_equal(z.grad, y.grad)
    w = z * 2
    w.grad = f32(1, 1, 1)
    z.cleargrad()
    w.backward()
    numpy.testing.assert_array_equal(z.grad, f32(2, 2, 2))


def test_pickle_of_a_parameter_used_in_a_graph():
    import pickle

    p = Parameter(f32(1, 2))
    loss = ops.sum(p * p)
    loss.backward()
    q = pickle.loads(pickle.dumps(p, pickle.HIGHEST_PROTOCOL))
    assert type(q) is Parameter and q.creator is None
    numpy.testing.assert_array_equal(q.array, f32(1, 2))
    numpy.testing.assert_array_equal(q.grad, f32(2, 4))
    assert q.update_rule is None and isinstance(q.initializer, initializers.Constant)
    q.cleargrad()
    ops.sum(q * 3).backward()
    numpy.testing.assert_array_equal(q.grad, f32(3, 3))
