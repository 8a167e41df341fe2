import itertools

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.unpooling_nd import unpooling_1d, unpooling_3d, unpooling_nd

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def as_tuple(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


def default_outsize(size, k, s, p, cover_all):
    return s * (size - 1) + k - 2 * p - (s - 1 if cover_all else 0)


def unpool_reference(x, ksize, stride, pad, outsize):
    """Add each input element to every in-range element of its window of the output."""
    nd = x.ndim - 2
    y = numpy.zeros(x.shape[:2] + tuple(outsize))
    for o in itertools.product(*[range(v) for v in x.shape[2:]]):
        for offset in itertools.product(*[range(v) for v in ksize]):
            pos = [o[i] * stride[i] - pad[i] + offset[i] for i in range(nd)]
            if all(0 <= pos[i] < outsize[i] for i in range(nd)):
                y[(Ellipsis,) + tuple(pos)] += x[(Ellipsis,) + o]
    return y.astype(x.dtype)


CASES = [
    # (x_shape, ksize, stride, pad, outsize, cover_all)
    ((2, 3, 3), 2, None, 0, None, False),
    ((2, 3, 3), 2, None, 0, None, True),
    ((2, 3, 3), 2, None, 0, (6,), True),
    ((2, 3, 4), 3, 2, 1, None, False),
    ((2, 3, 4), 3, 2, 1, 7, True),
    ((2, 2, 3, 2), 2, None, 0, None, False),
    ((2, 2, 3, 2), (3, 2), (2, 1), (1, 0), None, True),
    ((1, 2, 3, 4), 3, 2, 1, (4, 6), True),
    ((1, 2, 3, 4), 3, 2, 1, (5, 7), False),
    ((1, 2, 2, 3, 2), 2, None, 0, None, False),
    ((1, 2, 2, 3, 2), (2, 3, 2), (1, 2, 2), (0, 1, 1), (3, 5, 2), True),
]


@testing.parameterize(
    *testing.product({"x_shape,ksize,stride,pad,outsize,cover_all": CASES, "dtype": FLOATS})
)
class TestUnpoolingND(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        y = unpooling_nd(
            inputs[0], self.ksize, self.stride, self.pad, self.outsize, self.cover_all
        )
        return (y,)

    def forward_expected(self, inputs):
        nd = len(self.x_shape) - 2
        ksize = as_tuple(self.ksize, nd)
        stride = ksize if self.stride is None else as_tuple(self.stride, nd)
        pad = as_tuple(self.pad, nd)
        if self.outsize is None:
            outsize = tuple(
                default_outsize(self.x_shape[2 + i], ksize[i], stride[i], pad[i], self.cover_all)
                for i in range(nd)
            )
        else:
            outsize = as_tuple(self.outsize, nd)
        return (unpool_reference(inputs[0], ksize, stride, pad, outsize),)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestUnpooling1D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (2, 3, 4)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (unpooling_1d(inputs[0], 3, 2, 1, cover_all=False),)

    def forward_expected(self, inputs):
        return (unpool_reference(inputs[0], (3,), (2,), (1,), (7,)),)


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestUnpooling3D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (1, 2, 2, 3, 2)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (unpooling_3d(inputs[0], 2, outsize=(4, 5, 3)),)

    def forward_expected(self, inputs):
        return (unpool_reference(inputs[0], (2, 2, 2), (2, 2, 2), (0, 0, 0), (4, 5, 3)),)


def test_default_output_size_follows_cover_all():
    x = numpy.ones((1, 1, 3), numpy.float32)
    assert unpooling_1d(x, 2, cover_all=False).shape == (1, 1, 6)
    assert unpooling_1d(x, 2).shape == (1, 1, 5)


def test_overlapping_windows_add_up_and_the_gradient_sums_windows():
    x = Variable(numpy.array([[[1.0, 10.0]]]))
    y = unpooling_1d(x, 3, 1, cover_all=False)
    numpy.testing.assert_array_equal(y.array, [[[1.0, 11.0, 11.0, 10.0]]])
    y.grad = numpy.array([[[1.0, 2.0, 3.0, 4.0]]])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[6.0, 9.0]]])


def test_second_order_gradient():
    x = Variable(numpy.array([[[1.0, 2.0]]]))
    gy = Variable(numpy.array([[[1.0, 2.0, 3.0, 4.0]]]))
    (gx,) = grad([unpooling_1d(x, 2, cover_all=False)], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [[[3.0, 7.0]]])
    (ggy,) = grad([gx], [gy], [Variable(numpy.array([[[10.0, 20.0]]]))])
    numpy.testing.assert_array_equal(ggy.array, [[[10.0, 10.0, 20.0, 20.0]]])


def test_blocks_of_the_batch_give_the_same_result(pooling_checks):
    x = numpy.random.uniform(-1, 1, (5, 2, 3, 4))
    gy = numpy.random.uniform(-1, 1, (5, 2, 5, 7))
    pooling_checks.blocked_like_whole(
        lambda xv: (unpooling_nd(xv, 3, 2, 1, outsize=(5, 7)),), x, gy, rtol=1e-12
    )


def test_empty_batch(pooling_checks):
    pooling_checks.empty_batch(
        lambda x: unpooling_nd(x, 2, cover_all=False), (0, 3, 2, 2), (0, 3, 4, 4)
    )


X = numpy.zeros((1, 1, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        (func, (numpy.zeros(x_shape, numpy.float32), 2), {}, InvalidType, (expect, "Unpooling"))
        for func, x_shape, expect in [
            (unpooling_nd, (2, 3), "x.ndim == 3"),
            (unpooling_1d, (2, 3, 4, 4), "x.ndim == 3"),
            (unpooling_3d, (2, 3, 4, 4), "x.ndim == 5"),
        ]
    ]
    + [
        (
            unpooling_1d,
            (numpy.zeros((2, 3, 4), numpy.int32), 2),
            {},
            InvalidType,
            ("Unpooling1D", "x.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros((1, 1, 3, 3), numpy.float32), 2),
            {"outsize": (6, 8)},
            InvalidType,
            ("UnpoolingND", "x.shape[3] == 4"),
        ),
        (
            unpooling_1d,
            (numpy.zeros((1, 1, 1), numpy.float32), 2, 2, 1),
            {},
            InvalidType,
            ("Unpooling1D", "non-negative output size", "output size (-1,)"),
        ),
        ((X,), {"ksize": 0}, ValueError, ("unpooling_nd", "ksize", ">= 1")),
        ((X,), {"ksize": 2, "outsize": (4,)}, ValueError, ("unpooling_nd", "outsize", "2 ints")),
        ((X,), {"ksize": 2, "outsize": (4, 0)}, ValueError, ("unpooling_nd", "outsize", ">= 1")),
        ((X,), {"ksize": 2, "outsize": 4.0}, TypeError, ("unpooling_nd", "outsize")),
        ((X,), {"ksize": 2, "pad": -1}, ValueError, ("unpooling_nd", "pad", ">= 0")),
    ],
    function=unpooling_nd,
)


def test_an_output_size_of_zero_gives_an_empty_output():
    # s (d - 1) + k - 2p = 1 + 1 - 2 = 0 along the last axis, as in Chainer
    x = Variable(numpy.random.uniform(-1, 1, (2, 3, 3, 2)).astype(numpy.float32))
    y = unpooling_nd(x, 1, 1, 1, cover_all=False)
    assert y.shape == (2, 3, 1, 0)
    (gx,) = grad([y], [x], [numpy.zeros(y.shape, numpy.float32)])
    testing.assert_allclose(gx, numpy.zeros(x.shape), atol=0, rtol=0)
