import numpy
import pytest

from dbr.core import Variable, backend, no_backprop_mode, ops, testing
from dbr.core.ops.broadcast import BroadcastTo, SumTo
from dbr.core.ops.cast import Cast
from dbr.core.ops.get_item import GetItem
from dbr.core.ops.shape import Reshape, Transpose
from dbr.core.ops.sum import Sum
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(shape, dtype, low=-1, high=1):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


class _UnaryCase(FunctionTestCase):
    """One floating input of ``self.x_shape``; subclasses define ``function``/``expected``."""

    def generate_inputs(self):
        return (uniform(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (self.function(inputs[0]),)

    def forward_expected(self, inputs):
        return (numpy.asarray(self.expected(inputs[0])),)


# -- reshape -------------------------------------------------------------------------------


@testing.parameterize(
    *testing.product(
        {
            "x_shape,new_shape": [
                ((3, 4), (2, 6)),
                ((3, 4), (-1,)),
                ((2, 3, 4), (4, -1)),
                ((), (1, 1)),
                ((6,), (2, -1, 1)),
                ((3, 4), (3, 4)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestReshape(_UnaryCase):
    def function(self, x):
        return ops.reshape(x, self.new_shape)

    def expected(self, x):
        return x.reshape(self.new_shape)


def test_reshape_records_a_reshape_node_and_variable_methods_accept_both_forms():
    x = Variable(numpy.arange(6, dtype=numpy.float32))
    y = ops.reshape(x, (2, -1))
    assert type(y.creator) is Reshape
    assert y.shape == (2, 3)
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((3, 2)).shape == (3, 2)
    assert ops.reshape(x, 6) is x


# -- transpose -----------------------------------------------------------------------------


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axes": [
                ((2, 3, 4), (1, 2, 0)),
                ((2, 3, 4), (2, 0, 1)),
                ((2, 3, 4), None),
                ((2, 3), None),
                ((2, 3, 4), (-1, 0, 1)),
                ((3,), None),
                ((), None),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestTranspose(_UnaryCase):
    def function(self, x):
        return ops.transpose(x, self.axes)

    def expected(self, x):
        return x.transpose(self.axes)


def test_transpose_variable_methods():
    x = Variable(numpy.zeros((2, 3, 4), numpy.float32))
    assert x.T.shape == (4, 3, 2)
    assert x.transpose().shape == (4, 3, 2)
    assert x.transpose(1, 0, 2).shape == (3, 2, 4)
    assert x.transpose((2, 0, 1)).shape == (4, 2, 3)
    assert type(x.T.creator) is Transpose


@pytest.mark.parametrize("axes", [(0, 0, 1), (0, 1), (0, 1, 3), (0, 1, 2, 3)])
def test_transpose_with_bad_axes_raises_invalid_type(axes):
    x = Variable(numpy.zeros((2, 3, 4), numpy.float32))
    with pytest.raises(InvalidType) as info:
        ops.transpose(x, axes)
    message = str(info.value)
    assert "Transpose" in message
    assert str(axes) in message and "x.ndim == 3" in message


# -- broadcast_to and sum_to ---------------------------------------------------------------


@testing.parameterize(
    *testing.product(
        {
            "x_shape,target": [
                ((3, 1), (2, 3, 4)),
                ((2,), (3, 2)),
                ((), (2, 2)),
                ((1, 3), (1, 3)),
                ((2, 1, 3), (2, 4, 3)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestBroadcastTo(_UnaryCase):
    def function(self, x):
        return ops.broadcast_to(x, self.target)

    def expected(self, x):
        return numpy.broadcast_to(x, self.target)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,target": [
                ((2, 3, 4), (3, 1)),
                ((2, 3, 4), (1, 4)),
                ((2, 3, 4), ()),
                ((2, 3, 4), (2, 1, 4)),
                ((3, 2), (3, 2)),
                ((3, 2), (2,)),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSumTo(_UnaryCase):
    def function(self, x):
        return ops.sum_to(x, self.target)

    def expected(self, x):
        lead = x.ndim - len(self.target)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(self.target) if n == 1 and x.shape[lead + i] != 1
        )
        return x.sum(axis=axes, keepdims=True).reshape(self.target)


def test_broadcast_to_and_sum_to_record_their_nodes():
    x = Variable(numpy.ones((1, 3), numpy.float32))
    y = ops.broadcast_to(x, (2, 3))
    assert type(y.creator) is BroadcastTo
    z = ops.sum_to(y, (1, 3))
    assert type(z.creator) is SumTo
    testing.assert_allclose(z, numpy.full((1, 3), 2, numpy.float32), atol=0, rtol=0)


# node: the op, and (x.shape, a shape it cannot take) pairs
INCOMPATIBLE_SHAPES = {
    "Reshape": (ops.reshape, [((6,), (4, 2)), ((6,), (-1, -1)), ((2, 3), (4, -1))]),
    "BroadcastTo": (ops.broadcast_to, [((3,), (4,)), ((2, 3), (3,)), ((2, 3), (3, 3))]),
    "SumTo": (ops.sum_to, [((2, 3), (4,)), ((3,), (2, 3)), ((2, 3), (2, 2))]),
}


@pytest.mark.parametrize(
    ("op", "node", "x_shape", "target"),
    [
        (op, node, x_shape, target)
        for node, (op, pairs) in INCOMPATIBLE_SHAPES.items()
        for x_shape, target in pairs
    ],
)
def test_an_incompatible_shape_raises_invalid_type(op, node, x_shape, target):
    # reshape, broadcast_to and sum_to name their node and both shapes.
    x = Variable(numpy.zeros(x_shape, numpy.float32))
    with pytest.raises(InvalidType) as info:
        op(x, target)
    message = str(info.value)
    assert node in message
    assert str(target) in message and str(x_shape) in message


# -- sum ---------------------------------------------------------------------------------


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axis": [
                ((2, 3, 4), None),
                ((2, 3, 4), 0),
                ((2, 3, 4), 1),
                ((2, 3, 4), -1),
                ((2, 3, 4), (0, 2)),
                ((2, 3, 4), (-1, 0)),
                ((2, 3, 4), ()),
                ((), None),
                ((5,), 0),
            ],
            "keepdims": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestSum(_UnaryCase):
    def function(self, x):
        return ops.sum(x, axis=self.axis, keepdims=self.keepdims)

    def expected(self, x):
        return x.sum(axis=self.axis, keepdims=self.keepdims)


def test_sum_records_a_sum_node():
    x = Variable(numpy.ones((2, 3), numpy.float32))
    y = ops.sum(x, axis=1)
    assert type(y.creator) is Sum
    testing.assert_allclose(y, numpy.full(2, 3, numpy.float32), atol=0, rtol=0)


@pytest.mark.parametrize("axis", [2, -3, (0, 2), (-3,)])
def test_sum_over_a_missing_axis_raises_invalid_type(axis):
    x = Variable(numpy.zeros((2, 3), numpy.float32))
    with pytest.raises(InvalidType) as info:
        ops.sum(x, axis=axis)
    message = str(info.value)
    assert "Sum" in message
    assert "x.ndim == 2" in message


def test_sum_of_a_non_numeric_array_raises_invalid_type():
    with pytest.raises(InvalidType) as info:
        ops.sum(numpy.array(["a", "b"]))
    message = str(info.value)
    assert "Sum" in message and "'U'" in message


def test_sum_with_a_repeated_axis_raises_value_error():
    with pytest.raises(ValueError, match=r"sum: duplicate value in axis \(0, 0\)"):
        ops.sum(Variable(numpy.zeros((2, 3), numpy.float32)), axis=(0, 0))


@pytest.mark.parametrize("axis", [1.5, "0", [0, 1]])
def test_sum_with_a_non_integer_axis_raises_type_error(axis):
    with pytest.raises(TypeError, match="sum: expected axis"):
        ops.sum(Variable(numpy.zeros((2, 3), numpy.float32)), axis=axis)


# -- get_item ------------------------------------------------------------------------------

MASK_2D = numpy.array(
    [[True, False, True], [False, False, True], [True, True, False], [False, True, False]]
)

GET_ITEM_CASES = [
    {"case": "int", "x_shape": (4, 3), "slices": 1},
    {"case": "negative-int", "x_shape": (4, 3), "slices": -1},
    {"case": "ints-to-scalar", "x_shape": (4, 3), "slices": (1, 2)},
    {"case": "slice", "x_shape": (4, 3), "slices": slice(1, 3)},
    {"case": "step", "x_shape": (4, 3), "slices": (slice(None), slice(None, None, 2))},
    {"case": "none", "x_shape": (4, 3), "slices": (None, slice(1, 3), None)},
    {"case": "ellipsis-first", "x_shape": (4, 3, 2), "slices": (Ellipsis, 1)},
    {"case": "ellipsis-last", "x_shape": (4, 3, 2), "slices": (0, Ellipsis)},
    {"case": "ellipsis-none", "x_shape": (4, 3, 2), "slices": (slice(None), Ellipsis, None)},
    {"case": "reverse", "x_shape": (4, 3), "slices": slice(None, None, -1)},
    {
        "case": "negative-steps",
        "x_shape": (4, 3),
        "slices": (slice(3, 0, -2), slice(None, None, -1)),
    },
    {"case": "empty", "x_shape": (4, 3), "slices": slice(2, 2)},
    {"case": "int-array-repeated", "x_shape": (4, 3), "slices": numpy.array([0, 2, 0, 0])},
    {"case": "list-repeated", "x_shape": (4, 3), "slices": [1, 1, 3]},
    {
        "case": "int-array-axis1",
        "x_shape": (4, 3),
        "slices": (slice(None), numpy.array([2, 0, 2])),
    },
    {
        "case": "int-arrays-pairs",
        "x_shape": (4, 3),
        "slices": (numpy.array([0, 1, 0]), numpy.array([2, 2, 2])),
    },
    {"case": "int-array-2d", "x_shape": (4, 3), "slices": numpy.array([[0, 1], [1, 1]])},
    {"case": "bool-rows", "x_shape": (4, 3), "slices": numpy.array([True, False, True, True])},
    {"case": "bool-mask", "x_shape": (4, 3), "slices": MASK_2D},
]


def _index_on(device, slices):
    if isinstance(slices, tuple):
        return tuple(_index_on(device, s) for s in slices)
    if isinstance(slices, numpy.ndarray):
        return device.send(slices)
    return slices


@testing.parameterize(*testing.product_dict(GET_ITEM_CASES, [{"dtype": d} for d in FLOATS]))
class TestGetItem(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (ops.get_item(inputs[0], _index_on(device, self.slices)),)

    def forward_expected(self, inputs):
        return (numpy.asarray(inputs[0][self.slices]),)


def test_get_item_gradient_scatter_adds_over_repeated_indexes():
    x = Variable(numpy.zeros(4, numpy.float32))
    y = x[numpy.array([0, 2, 0, 0])]
    assert type(y.creator) is GetItem
    y.grad = numpy.array([1.0, 2.0, 3.0, 4.0], numpy.float32)
    y.backward()
    testing.assert_allclose(
        x.grad, numpy.array([8.0, 0.0, 2.0, 0.0], numpy.float32), atol=0, rtol=0
    )


def test_get_item_gradient_with_a_boolean_mask_fills_only_selected_elements():
    x = Variable(numpy.arange(12, dtype=numpy.float64).reshape(4, 3))
    y = x[MASK_2D]
    y.grad = numpy.arange(1, MASK_2D.sum() + 1, dtype=numpy.float64)
    y.backward()
    expected = numpy.zeros((4, 3))
    expected[MASK_2D] = numpy.arange(1, MASK_2D.sum() + 1)
    testing.assert_allclose(x.grad, expected, atol=0, rtol=0)


def test_get_item_with_too_many_indexes_raises_invalid_type():
    x = Variable(numpy.zeros((2, 3), numpy.float32))
    with pytest.raises(InvalidType) as info:
        ops.get_item(x, (0, 1, 2))
    message = str(info.value)
    assert "GetItem" in message
    assert "x.ndim axes (2)" in message and "3 indexed axes" in message


@pytest.mark.parametrize(
    ("index", "as_tuple"),
    [
        ([slice(1, None, 1)], (slice(1, None, 1),)),
        ([slice(None), slice(4, None, -2)], (slice(None), slice(4, None, -2))),
        ([[0, 1], [1, 2]], ([0, 1], [1, 2])),
        ([0, [0, 1], [2, 3]], (0, [0, 1], [2, 3])),
        ([[0, 1], [0, 2], None], ([0, 1], [0, 2], None)),
        ([Ellipsis, numpy.array([1, 3])], (Ellipsis, numpy.array([1, 3]))),
    ],
)
def test_get_item_takes_a_list_with_non_integers_as_one_index_per_axis(index, as_tuple):
    x = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
    y = ops.get_item(x, index)
    testing.assert_allclose(y.array, x[as_tuple], atol=0, rtol=0)


@pytest.mark.parametrize("index", [[1, 0, 1], [numpy.int64(1), 0], [True, False]])
def test_get_item_takes_a_list_of_integers_as_one_array_index(index):
    x = Variable(numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
    y = ops.get_item(x, index)
    testing.assert_allclose(y.array, x.array[numpy.asarray(index)], atol=0, rtol=0)
    y.grad = numpy.ones_like(y.array)
    y.backward()
    expected = numpy.zeros((2, 3), numpy.float32)
    numpy.add.at(expected, numpy.asarray(index), 1)
    testing.assert_allclose(x.grad, expected, atol=0, rtol=0)


@pytest.mark.parametrize("index", [[], ([],), ([[]],)], ids=["list", "tuple", "nested"])
def test_get_item_takes_an_empty_list_as_an_empty_integer_index(index):
    x = Variable(numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
    y = ops.get_item(x, index)
    assert y.shape == x.array[index].shape
    y.grad = numpy.ones_like(y.array)
    y.backward()
    testing.assert_allclose(x.grad, numpy.zeros((2, 3), numpy.float32), atol=0, rtol=0)


def test_get_item_gradient_of_a_list_of_slices_fills_the_selected_elements():
    x = Variable(numpy.arange(12, dtype=numpy.float32).reshape(3, 4))
    y = ops.get_item(x, [slice(None), slice(None, None, -2)])
    assert y.shape == (3, 2)
    y.grad = numpy.ones((3, 2), numpy.float32)
    y.backward()
    expected = numpy.zeros((3, 4), numpy.float32)
    expected[:, ::-2] = 1
    testing.assert_allclose(x.grad, expected, atol=0, rtol=0)


def test_get_item_with_two_ellipses_raises_value_error():
    x = Variable(numpy.zeros((2, 3), numpy.float32))
    with pytest.raises(ValueError, match="only one Ellipsis"):
        ops.get_item(x, (Ellipsis, 0, Ellipsis))


# -- cast -----------------------------------------------------------------------------------


@testing.parameterize(
    *[
        {"in_dtype": a, "out_dtype": b, "dtype": min(a, b, key=lambda t: numpy.dtype(t).itemsize)}
        for a in FLOATS
        for b in FLOATS
        if a is not b
    ]
)
class TestCast(FunctionTestCase):
    def before_test(self, test_name):
        if self.out_dtype is numpy.float16:
            # The output is rounded to float16 even when the numerical gradient is
            # computed in float64; cast is linear, so a large step costs no accuracy.
            self.check_backward_options = {"eps": 0.25}

    def generate_inputs(self):
        return (uniform((3, 2), self.in_dtype),)

    def forward(self, inputs, device):
        y = ops.cast(inputs[0], self.out_dtype)
        assert y.dtype == self.out_dtype
        return (y,)

    def forward_expected(self, inputs):
        return (inputs[0].astype(self.out_dtype),)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cast_backward_casts_the_gradient_back_to_the_input_dtype(dtype):
    x = Variable(numpy.array([1.0, 2.0], dtype))
    y = ops.cast(x, numpy.float32 if dtype is not numpy.float32 else numpy.float64)
    assert type(y.creator) is Cast
    ops.sum(y * y).backward()
    assert x.grad.dtype == dtype
    testing.assert_allclose(x.grad, 2 * x.array, atol=0, rtol=0)


def test_cast_to_the_same_dtype_without_backprop_returns_the_variable_itself():
    x = Variable(numpy.ones(2, numpy.float32))
    with no_backprop_mode():
        assert ops.cast(x, numpy.float32) is x
        assert ops.cast(x, "float32") is x


def test_cast_to_the_same_dtype_with_backprop_is_a_node_over_the_same_array():
    x = Variable(numpy.ones(2, numpy.float32))
    y1, y2 = ops.cast(x, numpy.float32), ops.cast(x, "float32")
    assert y1 is not x and y1.array is x.array and y1.creator is not None
    z = y1 + y2
    z.grad = numpy.ones(2, numpy.float32)
    z.backward()
    testing.assert_allclose(x.grad, numpy.full(2, 2, numpy.float32), atol=0, rtol=0)


def test_cast_accepts_dtype_names_and_integer_targets():
    x = Variable(numpy.array([1.5, -2.5], numpy.float32))
    assert ops.cast(x, "float16").dtype == numpy.float16
    y = ops.cast(x, numpy.int32)
    assert y.dtype == numpy.int32
    assert y.array.tolist() == [1, -2]


# -- copy and identity -----------------------------------------------------------------------


@testing.parameterize(*testing.product({"x_shape": [(3, 2), ()], "dtype": FLOATS}))
class TestCopy(_UnaryCase):
    def forward(self, inputs, device):
        return (ops.copy(inputs[0], device),)

    def expected(self, x):
        return x


@pytest.mark.parametrize("dst", ["@numpy", -1, backend.cpu])
def test_copy_to_the_cpu_makes_a_new_array_and_copies_the_gradient_back(dst):
    data = numpy.array([1.0, 2.0], numpy.float32)
    x = Variable(data)
    y = ops.copy(x, dst)
    assert y.device == backend.cpu
    assert not numpy.shares_memory(y.array, data)
    testing.assert_allclose(y, data, atol=0, rtol=0)
    y.grad = numpy.array([3.0, 4.0], numpy.float32)
    y.backward()
    testing.assert_allclose(x.grad, numpy.array([3.0, 4.0], numpy.float32), atol=0, rtol=0)
    assert not numpy.shares_memory(x.grad, y.grad)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [((3, 2),), ((3, 2), (4,), ())],
            "dtype": FLOATS,
        }
    )
)
class TestIdentity(FunctionTestCase):
    def generate_inputs(self):
        return tuple(uniform(s, self.dtype) for s in self.shapes)

    def forward(self, inputs, device):
        outputs = ops.identity(*inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)

    def forward_expected(self, inputs):
        return inputs


def test_identity_returns_one_variable_for_one_input_and_a_tuple_for_several():
    x = Variable(numpy.ones(2, numpy.float32))
    y = ops.identity(x)
    assert isinstance(y, Variable)
    assert y is not x and y.creator is not None
    ys = ops.identity(x, x)
    assert isinstance(ys, tuple) and len(ys) == 2
    assert ys[0].creator is ys[1].creator


def test_sum_over_axes_that_repeat_after_normalising_raises_invalid_type():
    with pytest.raises(InvalidType) as info:
        ops.sum(Variable(numpy.zeros((2, 3), numpy.float32)), axis=(0, -2))
    assert "Sum" in str(info.value)
    assert "distinct axes (0, -2)" in str(info.value)


# -- integer Variables keep their dtype in their gradients ----------------------------------


@pytest.mark.parametrize("dtype", [numpy.int8, numpy.int32, numpy.uint16])
@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (lambda x: ops.sum(x), [[1, 1, 1], [1, 1, 1]]),
        (lambda x: ops.sum(x, axis=1), [[1, 1, 1], [1, 1, 1]]),
        (lambda x: ops.sum_to(x, (1, 3)), [[1, 1, 1], [1, 1, 1]]),
        # Row 0 reaches the 4 rows of the output, row 1 none.
        (lambda x: ops.broadcast_to(x[:1], (4, 3)), [[4, 4, 4], [0, 0, 0]]),
    ],
    ids=["sum", "sum_axis", "sum_to", "broadcast_to"],
)
def test_the_gradient_of_an_integer_variable_keeps_its_dtype(function, expected, dtype):
    x = Variable(numpy.arange(6, dtype=dtype).reshape(2, 3))
    y = function(x)
    y.grad = numpy.ones(y.shape, y.dtype)
    y.backward()
    assert x.grad.dtype == dtype
    numpy.testing.assert_array_equal(x.grad, expected)


# -- clear errors for out-of-range indexes and unknown dtypes -------------------------------


@pytest.mark.parametrize(
    ("index", "axis", "size", "bad"),
    [
        ((0, 5), 1, 3, 5),
        (2, 0, 2, 2),
        ((Ellipsis, -4), 1, 3, -4),
        ((None, slice(None), 7), 1, 3, 7),
        ((numpy.array([True, False]), numpy.int64(3)), 1, 3, 3),
    ],
)
def test_get_item_names_the_axis_size_and_index_out_of_range(index, axis, size, bad):
    x = numpy.zeros((2, 3), numpy.float32)
    with pytest.raises(IndexError) as info:
        ops.get_item(x, index)
    assert str(info.value) == (
        f"get_item: index {bad} is out of bounds for axis {axis} of size {size} "
        "(x.shape == (2, 3))"
    )


def test_get_item_accepts_every_index_in_range():
    x = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    for i in range(-2, 2):
        for j in range(-3, 3):
            assert ops.get_item(x, (i, j)).array == x[i, j]
            assert ops.get_item(x, (Ellipsis, j)).shape == (2,)


@pytest.mark.parametrize("typ", ["foo", "float33", object()])
def test_cast_names_an_unknown_dtype(typ):
    with pytest.raises(TypeError) as info:
        ops.cast(numpy.zeros(2, numpy.float32), typ)
    assert str(info.value) == f"cast: expected typ to be a dtype, got {typ!r}"


@pytest.mark.parametrize(
    ("shape", "axis", "keepdims"),
    [
        ((256, 1024), None, False),
        ((256, 1024), 1, True),
        ((256, 1024), -1, False),
        ((256, 1024), 0, False),
        ((16, 32, 8, 8), (2, 3), False),
        ((16, 32, 8, 8), (1, 2, 3), True),
        ((16, 32, 8, 8), None, True),
        ((40000,), None, False),
        ((3, 70000), 1, False),
    ],
)
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_sum_of_a_large_array_matches_an_exact_sum(shape, axis, keepdims, dtype):
    # Large float arrays may be summed by a BLAS matrix-vector product: the result
    # keeps NumPy's shape and dtype and differs from the exact sum by rounding only.
    x = (numpy.random.default_rng(0).standard_normal(shape) + 0.25).astype(dtype)
    y = ops.sum(Variable(x), axis=axis, keepdims=keepdims)
    expected = x.sum(axis=axis, keepdims=keepdims, dtype=numpy.float64)
    assert y.dtype == dtype
    assert y.shape == numpy.shape(expected)
    scale = numpy.abs(x).sum(axis=axis, keepdims=keepdims, dtype=numpy.float64)
    eps = numpy.finfo(dtype).eps
    assert numpy.all(numpy.abs(y.array - expected) <= 8 * eps * scale + eps)
