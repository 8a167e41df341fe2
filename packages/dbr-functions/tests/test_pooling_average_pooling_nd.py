import itertools

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.average_pooling_nd import (
    average_pooling_1d,
    average_pooling_3d,
    average_pooling_nd,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def as_tuple(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


def average_pool_reference(x, ksize, stride, pad, pad_value):
    """Loop over every window element; padded elements count as 0 or not at all."""
    nd = x.ndim - 2
    outs = [(x.shape[2 + i] + 2 * pad[i] - ksize[i]) // stride[i] + 1 for i in range(nd)]
    y = numpy.empty(x.shape[:2] + tuple(outs), x.dtype)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in outs]):
            total, count = 0.0, 0
            for offset in itertools.product(*[range(v) for v in ksize]):
                pos = [o[i] * stride[i] - pad[i] + offset[i] for i in range(nd)]
                if all(0 <= pos[i] < x.shape[2 + i] for i in range(nd)):
                    total += float(x[(n, c) + tuple(pos)])
                    count += 1
            y[(n, c) + o] = total / (numpy.prod(ksize) if pad_value == 0 else count)
    return y


CASES = [
    # (x_shape, ksize, stride, pad)
    ((2, 3, 7), 2, None, 0),
    ((2, 3, 7), 3, 2, 1),
    ((1, 2, 9), (4,), (3,), (2,)),
    ((2, 2, 5, 6), 2, None, 0),
    ((2, 2, 5, 6), 3, 2, 1),
    ((1, 3, 6, 5), (2, 3), (1, 2), (1, 0)),
    ((1, 2, 4, 4), 2, 3, 1),
    ((1, 2, 4, 5, 3), (3, 2, 2), (2, 1, 2), (1, 0, 1)),
]


@testing.parameterize(
    *testing.product(
        {"x_shape,ksize,stride,pad": CASES, "pad_value": [0, None], "dtype": FLOATS},
    )
)
class TestAveragePoolingND(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        y = average_pooling_nd(inputs[0], self.ksize, self.stride, self.pad, self.pad_value)
        return (y,)

    def forward_expected(self, inputs):
        nd = len(self.x_shape) - 2
        ksize = as_tuple(self.ksize, nd)
        stride = ksize if self.stride is None else as_tuple(self.stride, nd)
        pad = as_tuple(self.pad, nd)
        return (average_pool_reference(inputs[0], ksize, stride, pad, self.pad_value),)


@testing.parameterize(*testing.product({"dtype": FLOATS, "pad_value": [0, None]}))
class TestAveragePooling1D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (2, 3, 8)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (average_pooling_1d(inputs[0], 3, 2, 1, self.pad_value),)

    def forward_expected(self, inputs):
        return (average_pool_reference(inputs[0], (3,), (2,), (1,), self.pad_value),)


@testing.parameterize(*testing.product({"dtype": FLOATS, "pad_value": [0, None]}))
class TestAveragePooling3D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, (1, 2, 4, 3, 5)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (average_pooling_3d(inputs[0], (2, 2, 3), 2, (0, 1, 1), self.pad_value),)

    def forward_expected(self, inputs):
        return (
            average_pool_reference(inputs[0], (2, 2, 3), (2, 2, 2), (0, 1, 1), self.pad_value),
        )


def test_padding_counts_as_zero_or_is_left_out():
    x = numpy.array([[[2.0, 4.0, 6.0]]])
    numpy.testing.assert_allclose(average_pooling_1d(x, 2, 2, 1).array, [[[1.0, 5.0]]])
    numpy.testing.assert_allclose(
        average_pooling_1d(x, 2, 2, 1, pad_value=None).array, [[[2.0, 5.0]]]
    )


def test_gradient_spreads_evenly_over_each_window():
    x = Variable(numpy.zeros((1, 1, 3)))
    y = average_pooling_1d(x, 2, 1, 0)
    y.grad = numpy.array([[[4.0, 8.0]]])
    y.backward()
    numpy.testing.assert_allclose(x.grad, [[[2.0, 6.0, 4.0]]])


def test_second_order_gradient():
    x = Variable(numpy.random.uniform(-1, 1, (1, 1, 4)))
    gy = Variable(numpy.array([[[1.0, 2.0]]]))
    (gx,) = grad([average_pooling_1d(x, 3, 1, 0, None)], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_allclose(gx.array, [[[1 / 3, 1.0, 1.0, 2 / 3]]])
    ggx = Variable(numpy.array([[[3.0, 6.0, 9.0, 12.0]]]))
    ggy, ggx_x = grad([gx], [gy, x], [ggx])
    numpy.testing.assert_allclose(ggy.array, [[[6.0, 9.0]]])
    assert ggx_x is None or not ggx_x.array.any()


def test_float16_sums_are_accumulated_in_float32():
    # The sum, 65568, overflows float16 (whose largest value is 65504); the mean does not.
    x = numpy.full((1, 1, 64), 2048.0, numpy.float16)
    x[0, 0, ::2] = 1.0
    y = average_pooling_1d(x, 64)
    assert y.dtype == numpy.float16
    numpy.testing.assert_allclose(y.array.astype(numpy.float64), [[[1024.5]]], rtol=1e-3)


def test_blocks_of_the_batch_give_the_same_result(pooling_checks):
    x = numpy.random.uniform(-1, 1, (5, 2, 7, 6))
    gy = numpy.random.uniform(-1, 1, (5, 2, 4, 3))
    pooling_checks.blocked_like_whole(
        lambda xv: (average_pooling_nd(xv, 3, 2, 1, pad_value=None),), x, gy, rtol=1e-12
    )


def test_empty_batch(pooling_checks):
    pooling_checks.empty_batch(
        lambda x: average_pooling_nd(x, 2, pad_value=None), (0, 3, 5, 5), (0, 3, 2, 2)
    )


test_bad_input = bad_input_test(
    [
        (
            func,
            (numpy.zeros(x_shape, numpy.float32), 2),
            {},
            InvalidType,
            (expect, "AveragePooling"),
        )
        for func, x_shape, expect in [
            (average_pooling_nd, (2, 3), "x.ndim == 3"),
            (average_pooling_1d, (2, 3, 4, 4), "x.ndim == 3"),
            (average_pooling_3d, (2, 3, 4, 4), "x.ndim == 5"),
        ]
    ]
    + [
        (
            average_pooling_3d,
            (numpy.zeros((1, 1, 2, 2, 2), numpy.int32), 2),
            {},
            InvalidType,
            ("AveragePooling3D", "x.dtype.kind == 'f'"),
        ),
        (
            average_pooling_1d,
            (numpy.zeros((1, 1, 3), numpy.float32), 6, 1, 1),
            {},
            InvalidType,
            ("AveragePooling1D", "at least one window"),
        ),
    ]
    + [
        (
            (numpy.zeros((1, 1, 4, 4), numpy.float32),),
            kwargs,
            error,
            ("average_pooling_nd", *words),
        )
        for kwargs, error, words in [
            ({"ksize": 2, "pad_value": 1}, ValueError, ["pad_value", "0 or None", "1"]),
            ({"ksize": 2, "pad": 2, "pad_value": None}, ValueError, ["pad", "smaller than ksize"]),
            ({"ksize": (2, 0)}, ValueError, ["ksize", ">= 1"]),
            ({"ksize": 2, "stride": (1, 1, 1)}, ValueError, ["stride", "2 ints"]),
        ]
    ],
    function=average_pooling_nd,
)
