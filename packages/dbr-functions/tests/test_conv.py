"""dbr.functions.conv: Chainer's ``chainer.utils.conv`` on arrays (im2col, col2im, sizes)."""

import numpy
import pytest

from dbr.functions import conv


def _im2col_loop(img, kh, kw, sy, sx, ph, pw, pval, dy, dx, out_h, out_w):
    n, c, h, w = img.shape
    col = numpy.full((n, c, kh, kw, out_h, out_w), pval, dtype=img.dtype)
    for i in range(kh):
        for j in range(kw):
            for y in range(out_h):
                for x in range(out_w):
                    r, q = y * sy + i * dy - ph, x * sx + j * dx - pw
                    if 0 <= r < h and 0 <= q < w:
                        col[:, :, i, j, y, x] = img[:, :, r, q]
    return col


@pytest.mark.parametrize(
    ("ksize", "stride", "pad", "dilate", "cover_all", "out"),
    [
        ((3, 3), (1, 1), (1, 1), (1, 1), False, None),
        ((3, 2), (2, 1), (1, 0), (1, 1), True, None),
        ((2, 2), (2, 3), (0, 1), (2, 1), False, None),
        ((3, 2), (2, 1), (1, 0), (1, 1), False, (4, 2)),
    ],
)
def test_im2col_cpu_reads_each_window_element(ksize, stride, pad, dilate, cover_all, out):
    img = numpy.random.default_rng(0).uniform(-1, 1, (2, 3, 5, 6)).astype(numpy.float32)
    (kh, kw), (sy, sx), (ph, pw), (dy, dx) = ksize, stride, pad, dilate
    if out is None:
        out_h = conv.get_conv_outsize(5, kh, sy, ph, cover_all, dy)
        out_w = conv.get_conv_outsize(6, kw, sx, pw, cover_all, dx)
        col = conv.im2col_cpu(img, kh, kw, sy, sx, ph, pw, -2.0, cover_all, dy, dx)
    else:
        out_h, out_w = out
        col = conv.im2col_cpu(img, kh, kw, sy, sx, ph, pw, -2.0, cover_all, dy, dx, out_h, out_w)
    expected = _im2col_loop(img, kh, kw, sy, sx, ph, pw, -2.0, dy, dx, out_h, out_w)
    assert col.dtype == img.dtype
    numpy.testing.assert_array_equal(col, expected)


def test_col2im_cpu_is_the_transpose_of_im2col_cpu():
    rng = numpy.random.default_rng(1)
    img = rng.uniform(-1, 1, (2, 3, 5, 6))
    col = conv.im2col_cpu(img, 3, 2, 2, 1, 1, 0, dy=1, dx=2)
    g = rng.uniform(-1, 1, col.shape)
    back = conv.col2im_cpu(g, 2, 1, 1, 0, 5, 6, dy=1, dx=2)
    assert back.shape == img.shape
    numpy.testing.assert_allclose(numpy.vdot(col, g), numpy.vdot(img, back))


def test_output_sizes():
    assert conv.get_conv_outsize(32, 3, 1, 1) == 32
    assert conv.get_conv_outsize(5, 2, 2, 0, cover_all=True) == 3
    assert conv.get_deconv_outsize(16, 4, 2, 1) == 32
    assert conv.get_deconv_outsize(3, 2, 2, 0, cover_all=True) == 5


def test_cpu_functions_refuse_other_arrays_and_shapes_naming_themselves():
    with pytest.raises(
        TypeError, match="im2col_cpu: expected img to be a numpy array, got list of builtins"
    ):
        conv.im2col_cpu([[[[1.0]]]], 1, 1, 1, 1, 0, 0)
    with pytest.raises(
        ValueError,
        match=r"im2col: expected img to be an array of 4 axes, got ndarray of shape \(2, 3\)",
    ):
        conv.im2col(numpy.zeros((2, 3)), 1, 1, 1, 1, 0, 0)
    with pytest.raises(ValueError, match="col2im: expected col to be an array of 6 axes"):
        conv.col2im_cpu(numpy.zeros((1, 1, 2, 2)), 1, 1, 0, 0, 2, 2)
    with pytest.raises(
        TypeError, match="im2col_gpu: expected img to be a cupy array, got ndarray of numpy"
    ):
        conv.im2col_gpu(numpy.zeros((1, 1, 2, 2)), 1, 1, 1, 1, 0, 0)
    with pytest.raises(TypeError, match="col2im_gpu: expected col to be a cupy array"):
        conv.col2im_gpu(numpy.zeros((1, 1, 1, 1, 2, 2)), 1, 1, 0, 0, 2, 2)


def test_as_tuple():
    assert conv.as_tuple(1, 3) == (1, 1, 1)
    assert conv.as_tuple([1, 2, 3], 3) == (1, 2, 3)
    with pytest.raises(ValueError, match=r"as_tuple: expected a sequence of length 3, got \(1,\)"):
        conv.as_tuple((1,), 3)


def test_im2col_nd_cpu_and_col2im_nd_cpu_are_transposes():
    rng = numpy.random.default_rng(2)
    img = rng.uniform(-1, 1, (2, 3, 4, 5, 3))
    col = conv.im2col_nd_cpu(img, (2, 3, 2), (2, 1, 1), (1, 0, 1))
    outs = tuple(
        conv.get_conv_outsize(d, k, s, p)
        for d, k, s, p in zip((4, 5, 3), (2, 3, 2), (2, 1, 1), (1, 0, 1))
    )
    assert col.shape == (2, 3, 2, 3, 2) + outs
    padded = numpy.pad(img, ((0, 0), (0, 0), (1, 1), (0, 0), (1, 1)))
    numpy.testing.assert_array_equal(col[:, :, 1, 2, 0, 0, 1, 1], padded[:, :, 1, 3, 1])
    g = rng.uniform(-1, 1, col.shape)
    back = conv.col2im_nd_cpu(g, (2, 1, 1), (1, 0, 1), (4, 5, 3))
    numpy.testing.assert_allclose(numpy.vdot(col, g), numpy.vdot(img, back))


def test_nd_functions_refuse_bad_input_naming_themselves():
    with pytest.raises(TypeError, match="im2col_nd_cpu: expected img to be a numpy array"):
        conv.im2col_nd_cpu([[[1.0]]], (1,), (1,), (0,))
    with pytest.raises(
        ValueError, match="im2col_nd: expected img to be an array of at least 3 axes"
    ):
        conv.im2col_nd(numpy.zeros((2, 3)), (1,), (1,), (0,))
    with pytest.raises(ValueError, match="ksize must be an int or a sequence of 1 ints"):
        conv.im2col_nd_cpu(numpy.zeros((1, 1, 3)), (2, 2), (1,), (0,))
    with pytest.raises(
        ValueError, match="col2im_nd: expected col to be an array of an even number"
    ):
        conv.col2im_nd_cpu(numpy.zeros((1, 1, 2)), 1, 0, (2,))
    with pytest.raises(TypeError, match="im2col_nd_gpu: expected img to be a cupy array"):
        conv.im2col_nd_gpu(numpy.zeros((1, 1, 2)), 1, 1, 0)
    with pytest.raises(TypeError, match="col2im_nd_gpu: expected col to be a cupy array"):
        conv.col2im_nd_gpu(numpy.zeros((1, 1, 1, 2)), 1, 0, (2,))
