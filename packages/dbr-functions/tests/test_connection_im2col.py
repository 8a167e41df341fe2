import itertools

import numpy
import pytest

from dbr.core.testing import bad_input_test
from dbr.functions.connection._im2col import (
    col2im_nd,
    get_conv_outsize,
    get_deconv_outsize,
    im2col_nd,
)


def _im2col_loop(x, ksize, stride, pad, dilate, cover_all, pad_value, n_windows):
    """im2col by loops; ``n_windows`` is ``convolution_loops.n_windows``."""
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    nd = len(spatial)
    covers = cover_all if isinstance(cover_all, tuple) else (cover_all,) * nd
    outs = [
        n_windows(spatial[i], ksize[i], stride[i], pad[i], dilate[i], covers[i]) for i in range(nd)
    ]
    col = numpy.empty((n, c) + tuple(ksize) + tuple(outs), dtype=x.dtype)
    for k in itertools.product(*[range(v) for v in ksize]):
        for o in itertools.product(*[range(v) for v in outs]):
            pos = [o[i] * stride[i] + k[i] * dilate[i] - pad[i] for i in range(nd)]
            inside = all(0 <= pos[i] < spatial[i] for i in range(nd))
            col[(Ellipsis,) + k + o] = x[(Ellipsis,) + tuple(pos)] if inside else pad_value
    return col


def _col2im_loop(col, stride, pad, in_size, dilate):
    nd = len(in_size)
    ksize = col.shape[2 : 2 + nd]
    outs = col.shape[2 + nd :]
    img = numpy.zeros(col.shape[:2] + tuple(in_size), dtype=numpy.float64)
    for k in itertools.product(*[range(v) for v in ksize]):
        for o in itertools.product(*[range(v) for v in outs]):
            pos = [o[i] * stride[i] + k[i] * dilate[i] - pad[i] for i in range(nd)]
            if all(0 <= pos[i] < in_size[i] for i in range(nd)):
                img[(slice(None), slice(None)) + tuple(pos)] += col[
                    (slice(None), slice(None)) + k + o
                ]
    return img.astype(col.dtype)


@pytest.mark.parametrize(
    "size,k,s,p,d,cover_all",
    [
        (s, k, st, p, d, ca)
        for s in (1, 4, 5, 7)
        for k in (1, 2, 3)
        for st in (1, 2, 3)
        for p in (0, 1, 2)
        for d in (1, 2)
        for ca in (False, True)
        if (k - 1) * d + 1 <= s + 2 * p
    ],
)
def test_get_conv_outsize(size, k, s, p, d, cover_all, convolution_loops):
    expected = convolution_loops.n_windows(size, k, s, p, d, cover_all)
    assert get_conv_outsize(size, k, s, p, cover_all, d) == expected


@pytest.mark.parametrize(
    "size,k,s,p,d,cover_all",
    [
        (s, k, st, p, d, ca)
        for s in (1, 4, 5)
        for k in (1, 2, 3, 4)
        for st in (1, 2, 3)
        for p in (0, 1)
        for d in (1, 2)
        for ca in (False, True)
    ],
)
def test_get_deconv_outsize_inverts_conv(size, k, s, p, d, cover_all):
    out = get_deconv_outsize(size, k, s, p, cover_all, d)
    if out > 0 and (k - 1) * d + 1 <= out + 2 * p:
        assert get_conv_outsize(out, k, s, p, cover_all, d) == size


def test_outsize_defaults():
    assert get_conv_outsize(32, 3, 1, 1) == 32
    assert get_conv_outsize(7, 3, 2, 0) == 3
    assert get_conv_outsize(8, 3, 2, 0) == 3
    assert get_conv_outsize(8, 3, 2, 0, cover_all=True) == 4
    assert get_conv_outsize(7, 3, 1, 0, d=2) == 3
    assert get_deconv_outsize(16, 4, 2, 1) == 32
    assert get_deconv_outsize(3, 3, 2, 0) == 7
    assert get_deconv_outsize(4, 3, 2, 0, cover_all=True) == 8


_CASES = [
    # spatial, ksize, stride, pad, dilate, cover_all
    ((5,), (3,), (1,), (0,), (1,), False),
    ((7,), (2,), (3,), (1,), (2,), True),
    ((4, 5), (3, 3), (1, 1), (1, 1), (1, 1), False),
    ((5, 6), (2, 3), (2, 1), (0, 1), (1, 1), False),
    ((5, 6), (2, 3), (2, 1), (0, 1), (1, 1), True),
    ((7, 6), (3, 2), (2, 3), (1, 0), (2, 1), True),
    ((6, 7), (2, 2), (2, 2), (0, 0), (1, 1), True),
    ((3, 4, 5), (2, 2, 3), (1, 2, 1), (0, 1, 1), (1, 1, 2), False),
    ((4, 3, 5), (2, 2, 2), (2, 2, 2), (1, 0, 0), (1, 1, 1), True),
]


@pytest.mark.parametrize("case", _CASES)
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64, numpy.int32])
def test_im2col_nd_matches_loop(case, dtype, convolution_loops):
    spatial, ksize, stride, pad, dilate, cover_all = case
    x = (numpy.random.RandomState(0).uniform(-5, 5, (2, 3) + spatial)).astype(dtype)
    col = im2col_nd(x, ksize, stride, pad, dilate, cover_all)
    expected = _im2col_loop(
        x, ksize, stride, pad, dilate, cover_all, 0, convolution_loops.n_windows
    )
    assert col.dtype == x.dtype
    assert col.flags.c_contiguous
    numpy.testing.assert_array_equal(col, expected)


@pytest.mark.parametrize("case", _CASES)
def test_im2col_nd_pad_value(case, convolution_loops):
    spatial, ksize, stride, pad, dilate, cover_all = case
    x = numpy.random.RandomState(1).uniform(-1, 1, (1, 2) + spatial)
    col = im2col_nd(x, ksize, stride, pad, dilate, cover_all, pad_value=-numpy.inf)
    expected = _im2col_loop(
        x, ksize, stride, pad, dilate, cover_all, -numpy.inf, convolution_loops.n_windows
    )
    numpy.testing.assert_array_equal(col, expected)


def test_im2col_nd_scalar_parameters_and_noncontiguous_input(convolution_loops):
    x = numpy.random.RandomState(2).uniform(-1, 1, (2, 3, 6, 10))[..., ::2]
    col = im2col_nd(x, 2, 2, 1, 1, True)
    expected = _im2col_loop(
        x, (2, 2), (2, 2), (1, 1), (1, 1), True, 0, convolution_loops.n_windows
    )
    numpy.testing.assert_array_equal(col, expected)


def test_im2col_nd_cover_all_per_axis(convolution_loops):
    x = numpy.random.RandomState(5).uniform(-1, 1, (2, 2, 7, 8))
    for cover_all in ((True, False), (False, True), [True, True]):
        col = im2col_nd(x, (2, 3), 2, 0, 1, cover_all)
        expected = _im2col_loop(
            x, (2, 3), (2, 2), (0, 0), (1, 1), tuple(cover_all), 0, convolution_loops.n_windows
        )
        numpy.testing.assert_array_equal(col, expected)
    assert im2col_nd(x, 2, 2, 0, 1, (True, False)).shape[-2:] == (4, 4)


def test_im2col_nd_does_not_alias_input():
    x = numpy.ones((1, 1, 3, 3))
    col = im2col_nd(x, 1, 1, 0)
    col[...] = 5
    assert (x == 1).all()


def test_im2col_nd_empty_batch():
    col = im2col_nd(numpy.zeros((0, 3, 5, 5), numpy.float32), 3, 2, 1)
    assert col.shape == (0, 3, 3, 3, 3, 3)


@pytest.mark.parametrize("case", _CASES)
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_col2im_nd_matches_loop(case, dtype):
    spatial, ksize, stride, pad, dilate, cover_all = case
    nd = len(spatial)
    outs = tuple(
        get_conv_outsize(spatial[i], ksize[i], stride[i], pad[i], cover_all, dilate[i])
        for i in range(nd)
    )
    col = numpy.random.RandomState(3).uniform(-1, 1, (2, 3) + ksize + outs).astype(dtype)
    img = col2im_nd(col, stride, pad, spatial, dilate)
    expected = _col2im_loop(col, stride, pad, spatial, dilate)
    assert img.dtype == col.dtype
    assert img.shape == (2, 3) + spatial
    assert img.flags.c_contiguous
    numpy.testing.assert_allclose(img, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", _CASES)
def test_col2im_nd_is_transpose_of_im2col_nd(case):
    spatial, ksize, stride, pad, dilate, cover_all = case
    rng = numpy.random.RandomState(4)
    x = rng.uniform(-1, 1, (2, 3) + spatial)
    col = im2col_nd(x, ksize, stride, pad, dilate, cover_all)
    g = rng.uniform(-1, 1, col.shape)
    lhs = (col * g).sum()
    rhs = (x * col2im_nd(g, stride, pad, spatial, dilate)).sum()
    numpy.testing.assert_allclose(lhs, rhs, rtol=1e-12)


X = numpy.zeros((1, 1, 4, 4))

test_bad_input = bad_input_test(
    [
        ((X, 3, 0, 0), ValueError, "im2col_nd: stride must be >= 1, got 0"),
        ((X, (3, 3, 3), 1, 0), ValueError, "im2col_nd: ksize must be an int or a sequence of 2"),
        ((X, 3, 1, 0.5), TypeError, "im2col_nd: pad must be an int or a sequence of ints"),
        ((X, 3, 1, -1), ValueError, "im2col_nd: pad must be >= 0, got -1"),
        ((X, 6, 1, 0), ValueError, ("im2col_nd: the window (", ") does not fit")),
        (
            (X, 3, 1, 0),
            {"cover_all": (True,)},
            ValueError,
            "im2col_nd: cover_all must be a bool or a sequence",
        ),
        (
            col2im_nd,
            (numpy.zeros((1, 1, 2, 2, 3, 3)), 1, 0, (4, 4), 0),
            {},
            ValueError,
            "col2im_nd: dilate must be >= 1, got 0",
        ),
    ],
    function=im2col_nd,
)
