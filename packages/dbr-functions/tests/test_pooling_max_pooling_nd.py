import itertools

import numpy
import pytest

from dbr.core import Variable, grad, no_backprop_mode, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.max_pooling_nd import (
    MaxPoolingND,
    max_pooling_1d,
    max_pooling_3d,
    max_pooling_nd,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def distinct(shape, dtype):
    """Values without ties, 1.6 / size apart (finite differences never reorder them)."""
    size = int(numpy.prod(shape))
    values = (numpy.random.permutation(size) - size / 2) * (1.6 / max(size, 1))
    return values.reshape(shape).astype(dtype)


def out_len(d, k, s, p, cover_all):
    if cover_all:
        return (d + 2 * p - k + s - 1) // s + 1
    return (d + 2 * p - k) // s + 1


def max_pool_reference(x, ksize, stride, pad, cover_all):
    """Loop over every window element; the padding reads as -inf; the first maximum wins."""
    nd = x.ndim - 2
    outs = [out_len(x.shape[2 + i], ksize[i], stride[i], pad[i], cover_all) for i in range(nd)]
    y = numpy.empty(x.shape[:2] + tuple(outs), x.dtype)
    idx = numpy.empty(y.shape, numpy.int32)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in outs]):
            best, best_k = -numpy.inf, 0
            for k, offset in enumerate(itertools.product(*[range(v) for v in ksize])):
                pos = [o[i] * stride[i] - pad[i] + offset[i] for i in range(nd)]
                inside = all(0 <= pos[i] < x.shape[2 + i] for i in range(nd))
                v = x[(n, c) + tuple(pos)] if inside else -numpy.inf
                if v > best:
                    best, best_k = v, k
            y[(n, c) + o] = best
            idx[(n, c) + o] = best_k
    return y, idx


def as_tuple(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


CASES = [
    # (x_shape, ksize, stride, pad, cover_all)
    ((2, 3, 7), 2, None, 0, True),
    ((2, 3, 7), 3, 2, 1, False),
    ((1, 2, 9), (4,), (3,), (2,), True),
    ((2, 2, 5, 6), 2, None, 0, True),
    ((2, 2, 5, 6), 3, 2, 1, True),
    ((2, 2, 5, 6), 3, 2, 1, False),
    ((1, 3, 6, 5), (2, 3), (1, 2), (1, 0), False),
    ((1, 2, 4, 4), 2, 3, 0, True),
    ((1, 2, 4, 5, 3), 2, None, 0, True),
    ((1, 2, 4, 5, 3), (3, 2, 2), (2, 1, 2), (1, 0, 1), False),
    ((1, 1, 3, 2, 3, 2), 2, 1, 0, False),
]


@testing.parameterize(
    *testing.product(
        {"x_shape,ksize,stride,pad,cover_all": CASES, "dtype": FLOATS},
    )
)
class TestMaxPoolingND(FunctionTestCase):
    def generate_inputs(self):
        return (distinct(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        y = max_pooling_nd(inputs[0], self.ksize, self.stride, self.pad, self.cover_all)
        return (y,)

    def forward_expected(self, inputs):
        nd = len(self.x_shape) - 2
        ksize = as_tuple(self.ksize, nd)
        stride = ksize if self.stride is None else as_tuple(self.stride, nd)
        y, _ = max_pool_reference(inputs[0], ksize, stride, as_tuple(self.pad, nd), self.cover_all)
        return (y,)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestMaxPooling1D(FunctionTestCase):
    def generate_inputs(self):
        return (distinct((2, 3, 8), self.dtype),)

    def forward(self, inputs, device):
        return (max_pooling_1d(inputs[0], 3, 2, 1),)

    def forward_expected(self, inputs):
        return (max_pool_reference(inputs[0], (3,), (2,), (1,), True)[0],)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestMaxPooling3D(FunctionTestCase):
    def generate_inputs(self):
        return (distinct((1, 2, 4, 3, 5), self.dtype),)

    def forward(self, inputs, device):
        return (max_pooling_3d(inputs[0], (2, 2, 3), 2, (0, 1, 1), cover_all=False),)

    def forward_expected(self, inputs):
        return (max_pool_reference(inputs[0], (2, 2, 3), (2, 2, 2), (0, 1, 1), False)[0],)


@pytest.mark.parametrize("x_shape,ksize,stride,pad,cover_all", CASES)
def test_return_indices_are_the_first_maxima_in_c_order(x_shape, ksize, stride, pad, cover_all):
    x = distinct(x_shape, numpy.float32)
    y, indexes = max_pooling_nd(x, ksize, stride, pad, cover_all, return_indices=True)
    nd = len(x_shape) - 2
    k = as_tuple(ksize, nd)
    s = k if stride is None else as_tuple(stride, nd)
    y_ref, idx_ref = max_pool_reference(x, k, s, as_tuple(pad, nd), cover_all)
    assert isinstance(y, Variable) and isinstance(indexes, numpy.ndarray)
    assert indexes.dtype == numpy.int64 and indexes.shape == y.shape
    numpy.testing.assert_array_equal(y.array, y_ref)
    numpy.testing.assert_array_equal(indexes, idx_ref)


def test_ties_send_the_gradient_to_the_first_maximum_only():
    x = Variable(numpy.zeros((1, 1, 4, 4), numpy.float32))
    y = max_pooling_nd(x, 3, 1, 0)
    y.grad = numpy.full(y.shape, 1.0, numpy.float32)
    y.backward()
    expected = numpy.zeros((4, 4), numpy.float32)
    expected[:2, :2] = 1.0
    numpy.testing.assert_array_equal(x.grad[0, 0], expected)


def test_overlapping_windows_add_their_gradients():
    x = Variable(numpy.array([[[0.0, 5.0, 1.0, 2.0, 0.5]]]))
    y = max_pooling_1d(x, 3, 1)
    numpy.testing.assert_array_equal(y.array, [[[5.0, 5.0, 2.0]]])
    y.grad = numpy.array([[[1.0, 10.0, 100.0]]])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[0.0, 11.0, 0.0, 100.0, 0.0]]])


def test_a_window_wholly_in_the_padding_gives_minus_infinity_and_no_gradient():
    # size 5, k 2, s 3, p 1 with cover_all: the last window starts in the right padding.
    x = Variable(numpy.arange(5.0).reshape(1, 1, 5))
    y = max_pooling_1d(x, 2, 3, 1, cover_all=True)
    numpy.testing.assert_array_equal(y.array, [[[0.0, 3.0, -numpy.inf]]])
    y.grad = numpy.ones(y.shape)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[1.0, 0.0, 0.0, 1.0, 0.0]]])


def test_second_order_gradient_gathers_at_the_maxima():
    x = Variable(numpy.array([[[3.0, 1.0, 2.0, 7.0, 4.0]]]))
    gy = Variable(numpy.array([[[1.0, 1.0, 1.0]]]))
    (gx,) = grad([max_pooling_1d(x, 2)], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [[[1.0, 0.0, 0.0, 1.0, 1.0]]])
    ggx = Variable(numpy.array([[[10.0, 20.0, 30.0, 40.0, 50.0]]]))
    ggy, ggx_x = grad([gx], [gy, x], [ggx])
    numpy.testing.assert_array_equal(ggy.array, [[[10.0, 40.0, 50.0]]])
    assert ggx_x is None or not ggx_x.array.any()


def test_an_infinite_gradient_stays_where_it_belongs():
    x = Variable(numpy.array([[[3.0, 1.0, 2.0, 7.0]]], numpy.float32))
    y = max_pooling_1d(x, 2)
    y.grad = numpy.array([[[numpy.inf, 1.0]]], numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[numpy.inf, 0.0, 0.0, 1.0]]])


DISJOINT_CASES = [
    # (x_shape, ksize, stride, pad, cover_all) with stride >= ksize on every axis
    ((2, 3, 7), 2, None, 0, True),
    ((1, 2, 7), 2, 3, 1, True),
    ((2, 2, 5, 6), 2, None, 0, True),
    ((1, 2, 5, 6), 2, 2, 1, False),
    ((1, 2, 4, 4), 2, 3, 0, True),
    ((1, 2, 4, 5, 3), 2, None, 0, True),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,ksize,stride,pad,cover_all", DISJOINT_CASES)
def test_disjoint_windows_send_each_gradient_to_the_first_maximum_and_zero_elsewhere(
    x_shape, ksize, stride, pad, cover_all, dtype
):
    # Ties (values on a coarse grid) and negative gradients: the picked element
    # gets gy exactly, every other element +0.0.
    x = numpy.random.randint(-2, 3, x_shape).astype(dtype)
    nd = len(x_shape) - 2
    k = as_tuple(ksize, nd)
    s = k if stride is None else as_tuple(stride, nd)
    p = as_tuple(pad, nd)
    _, idx_ref = max_pool_reference(x, k, s, p, cover_all)
    v = Variable(x)
    y = max_pooling_nd(v, ksize, stride, pad, cover_all)
    gy = numpy.random.uniform(-1, 1, y.shape).astype(dtype)
    y.grad = gy
    y.backward()
    expected = numpy.zeros(x_shape, dtype)
    for n, c in itertools.product(range(x_shape[0]), range(x_shape[1])):
        for o in itertools.product(*[range(v) for v in y.shape[2:]]):
            offset = list(itertools.product(*[range(v) for v in k]))[idx_ref[(n, c) + o]]
            pos = tuple(o[i] * s[i] - p[i] + offset[i] for i in range(nd))
            if all(0 <= pos[i] < x_shape[2 + i] for i in range(nd)):
                expected[(n, c) + pos] += gy[(n, c) + o]
    assert v.grad.dtype == dtype and v.grad.flags.c_contiguous
    numpy.testing.assert_array_equal(v.grad, expected)
    assert not numpy.signbit(v.grad[v.grad == 0]).any()


def test_indexes_are_kept_only_when_backprop_can_use_them():
    x = distinct((2, 3, 6, 6), numpy.float32)
    with no_backprop_mode():
        func = MaxPoolingND(2, 2)
        func.apply((x,))
        assert func.indexes is None
        y, indexes = max_pooling_nd(x, 2, return_indices=True)
        assert indexes.shape == (2, 3, 3, 3) and indexes.dtype == numpy.int64


def test_blocks_of_the_batch_give_the_same_result(pooling_checks):
    x = distinct((5, 2, 7, 6), numpy.float64)
    gy = numpy.random.uniform(-1, 1, (5, 2, 4, 4))
    pooling_checks.blocked_like_whole(
        lambda xv: max_pooling_nd(xv, 3, 2, 1, return_indices=True), x, gy, rtol=0
    )


def test_empty_batch(pooling_checks):
    pooling_checks.empty_batch(lambda x: max_pooling_nd(x, 2), (0, 3, 5, 5), (0, 3, 3, 3))


def test_nd_takes_the_number_of_axes_from_a_ksize_tuple():
    x = distinct((2, 3, 4, 6), numpy.float32)
    y = max_pooling_nd(x, (2, 3))
    assert y.shape == (2, 3, 2, 2)
    with pytest.raises(InvalidType) as e:
        max_pooling_nd(x, (2, 2, 2))
    assert "MaxPoolingND" in str(e.value) and "x.ndim == 5" in str(e.value)


X_3D = numpy.zeros((1, 1, 4, 4, 4), numpy.float32)

test_bad_input = bad_input_test(
    [
        (func, (numpy.zeros(x_shape, numpy.float32), 2), {}, InvalidType, (expect, "MaxPooling"))
        for func, x_shape, expect in [
            (max_pooling_nd, (2, 3), "x.ndim == 3"),
            (max_pooling_1d, (2, 3, 4, 4), "x.ndim == 3"),
            (max_pooling_3d, (2, 3, 4, 4), "x.ndim == 5"),
        ]
    ]
    + [
        (
            max_pooling_1d,
            (numpy.zeros((2, 3, 4), numpy.int32), 2),
            {},
            InvalidType,
            ("MaxPooling1D", "x.dtype.kind == 'f'"),
        ),
        (
            max_pooling_1d,
            (numpy.zeros((2, 3, 4), numpy.float32), 7, 1, 1),
            {"cover_all": False},
            InvalidType,
            ("MaxPooling1D", "at least one window", "(2, 3, 4)"),
        ),
        ((X_3D,), {"ksize": 0}, ValueError, ("max_pooling_3d", "ksize", ">= 1")),
        ((X_3D,), {"ksize": 2.0}, TypeError, ("max_pooling_3d", "ksize", "2.0")),
        (
            (X_3D,),
            {"ksize": (2, 2)},
            ValueError,
            ("max_pooling_3d", "ksize", "3 ints", "length 2"),
        ),
        ((X_3D,), {"ksize": 2, "stride": 0}, ValueError, ("max_pooling_3d", "stride", ">= 1")),
        ((X_3D,), {"ksize": 2, "pad": -1}, ValueError, ("max_pooling_3d", "pad", ">= 0")),
    ],
    function=max_pooling_3d,
)
