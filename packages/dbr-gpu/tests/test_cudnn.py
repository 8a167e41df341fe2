import itertools

import numpy as np
import pytest

import dbr.gpu
from dbr.core import config, using_config
from dbr.core.testing import get_test_device
from dbr.gpu import cudnn


@pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")
def test_unavailable_without_gpu_and_never_used():
    assert cudnn.available() is False
    assert cudnn.unavailable_reason()
    for mode, level in itertools.product(("always", "auto", "never"), (">=auto", "==always")):
        with using_config("use_cudnn", mode):
            assert cudnn.should_use_cudnn(level, np.float32) is False


def test_unknown_use_cudnn_value_and_level_raise():
    with using_config("use_cudnn", "sometimes"), pytest.raises(ValueError, match="'sometimes'"):
        cudnn.should_use_cudnn(">=auto")
    with pytest.raises(ValueError, match="'>=never'"):
        cudnn.should_use_cudnn(">=never")


def test_levels_follow_chainer(monkeypatch):
    monkeypatch.setattr(cudnn, "available", lambda: True)
    expected = {
        ("always", ">=auto"): True,
        ("always", "==always"): True,
        ("auto", ">=auto"): True,
        ("auto", "==always"): False,
        ("never", ">=auto"): False,
        ("never", "==always"): False,
    }
    for (mode, level), answer in expected.items():
        with using_config("use_cudnn", mode):
            assert cudnn.should_use_cudnn(level) is answer, (mode, level)
            assert cudnn.should_use_cudnn(level, np.float16) is answer
            assert cudnn.should_use_cudnn(level, np.int32) is False
    assert config.use_cudnn == "auto"


def _windows(x, k, stride, pad, dilate):
    """im2col: (N, C, *k, *out) views of the padded input."""
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [
        (size + 2 * p - (kk - 1) * d - 1) // s + 1
        for size, kk, s, p, d in zip(x.shape[2:], k, stride, pad, dilate)
    ]
    cols = np.empty(x.shape[:2] + tuple(k) + tuple(out), x.dtype)
    for offs in itertools.product(*[range(kk) for kk in k]):
        index = tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(offs, dilate, stride, out)
        )
        cols[(slice(None), slice(None)) + offs] = xp[(slice(None), slice(None)) + index]
    return cols, n


def _reference(x, W, b, stride, pad, dilate, groups):
    """Forward, and the gradients of sum(y * gy), in float64 with NumPy."""
    x, W = x.astype(np.float64), W.astype(np.float64)
    k = W.shape[2:]
    cols, n = _windows(x, k, stride, pad, dilate)
    N, C = x.shape[:2]
    O, g = W.shape[0], groups
    cg = cols.reshape((N, g, C // g) + cols.shape[2:])
    Wg = W.reshape((g, O // g) + W.shape[1:])
    letters = "defgh"[:n]
    outs = "pqrst"[:n]
    y = np.einsum(f"ngc{letters}{outs},goc{letters}->ngo{outs}", cg, Wg)
    y = y.reshape((N, O) + y.shape[3:])
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * n)
    return y, cg, Wg, letters, outs


def _grads(x, W, gy, stride, pad, dilate, groups):
    _, cg, Wg, letters, outs = _reference(x, W, None, stride, pad, dilate, groups)
    N, C = x.shape[:2]
    gyg = gy.astype(np.float64).reshape((N, groups, W.shape[0] // groups) + gy.shape[2:])
    gW = np.einsum(f"ngc{letters}{outs},ngo{outs}->goc{letters}", cg, gyg).reshape(W.shape)
    gcols = np.einsum(f"goc{letters},ngo{outs}->ngc{letters}{outs}", Wg, gyg)
    gcols = gcols.reshape((N, C) + gcols.shape[3:])
    n = x.ndim - 2
    padded = np.zeros((N, C) + tuple(s + 2 * p for s, p in zip(x.shape[2:], pad)))
    out = gy.shape[2:]
    for offs in itertools.product(*[range(kk) for kk in W.shape[2:]]):
        index = tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(offs, dilate, stride, out)
        )
        padded[(slice(None), slice(None)) + index] += gcols[(slice(None), slice(None)) + offs]
    inner = tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:]))
    gx = padded[(slice(None), slice(None)) + inner]
    assert gx.shape == x.shape and n == len(pad)
    return gx, gW


_CASES = [
    # (x shape, W shape, stride, pad, dilate, groups)
    ((2, 3, 11), (4, 3, 3), (1,), (1,), (1,), 1),
    ((2, 4, 13), (6, 2, 3), (2,), (2,), (2,), 2),
    ((2, 3, 9, 8), (5, 3, 3, 2), (1, 1), (1, 0), (1, 1), 1),
    ((1, 4, 10, 9), (4, 1, 3, 3), (2, 1), (1, 2), (2, 1), 4),
    ((2, 6, 12, 11), (4, 3, 3, 3), (3, 2), (0, 1), (1, 2), 2),
    ((1, 2, 6, 7, 5), (3, 2, 3, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1),
]
_TOLERANCE = {np.float16: 2e-2, np.float32: 1e-4, np.float64: 1e-10}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("case", _CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c}")
def test_convolutions_match_im2col_numpy(case, dtype):
    get_test_device("@cupy:0")
    if not cudnn.available():
        pytest.skip(f"cuDNN is not available: {cudnn.unavailable_reason()}")
    cupy = dbr.gpu.cupy
    x_shape, W_shape, stride, pad, dilate, groups = case
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, x_shape).astype(dtype)
    W = rng.uniform(-1, 1, W_shape).astype(dtype)
    b = rng.uniform(-1, 1, W_shape[0]).astype(dtype)
    y_ref = _reference(x, W, b, stride, pad, dilate, groups)[0]
    gy = rng.uniform(-1, 1, y_ref.shape).astype(dtype)
    gx_ref, gW_ref = _grads(x, W, gy, stride, pad, dilate, groups)
    tol = _TOLERANCE[dtype]
    cx, cW, cgy = cupy.asarray(x), cupy.asarray(W), cupy.asarray(gy)

    y = cudnn.convolution_forward(cx, cW, cupy.asarray(b), stride, pad, dilate, groups)
    gx = cudnn.convolution_backward_data(cW, cgy, x_shape, stride, pad, dilate, groups)
    gW = cudnn.convolution_backward_filter(cx, cgy, W_shape, stride, pad, dilate, groups)
    for got, want in ((y, y_ref), (gx, gx_ref), (gW, gW_ref)):
        assert got.dtype == dtype and got.shape == want.shape
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got.get().astype(np.float64), want, rtol=tol, atol=tol * scale)


@pytest.mark.gpu
def test_non_contiguous_inputs_and_graph_cache():
    get_test_device("@cupy:0")
    if not cudnn.available():
        pytest.skip(f"cuDNN is not available: {cudnn.unavailable_reason()}")
    cupy = dbr.gpu.cupy
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
    W = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    cx = cupy.asarray(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(0, 1, 3, 2)
    assert not cx.flags.c_contiguous
    y1 = cudnn.convolution_forward(cx, cupy.asarray(W), None, 1, 1, 1, 1)
    graphs = len(cudnn._graphs)
    y2 = cudnn.convolution_forward(cupy.asarray(x), cupy.asarray(W), None, 1, 1, 1, 1)
    assert len(cudnn._graphs) == graphs
    want = _reference(x, W, None, (1, 1), (1, 1), (1, 1), 1)[0]
    np.testing.assert_allclose(y1.get(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(y1.get(), y2.get())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_deterministic_mode_gives_the_same_bits_every_run(dtype):
    get_test_device("@cupy:0")
    if not cudnn.available():
        pytest.skip(f"cuDNN is not available: {cudnn.unavailable_reason()}")
    cupy = dbr.gpu.cupy
    x_shape, W_shape, stride, pad, dilate, groups = _CASES[-1]
    rng = np.random.default_rng(3)
    x = cupy.asarray(rng.uniform(-1, 1, x_shape).astype(dtype))
    W = cupy.asarray(rng.uniform(-1, 1, W_shape).astype(dtype))
    y_shape = cudnn.convolution_forward(x, W, None, stride, pad, dilate, groups).shape
    gy = cupy.asarray(rng.uniform(-1, 1, y_shape).astype(dtype))
    graphs = len(cudnn._graphs)
    with using_config("cudnn_deterministic", True):
        runs = [
            (
                cudnn.convolution_backward_data(W, gy, x_shape, stride, pad, dilate, groups).get(),
                cudnn.convolution_backward_filter(
                    x, gy, W_shape, stride, pad, dilate, groups
                ).get(),
            )
            for _ in range(5)
        ]
    # Graphs of their own: the default mode's may use engines with atomics.
    assert len(cudnn._graphs) >= graphs + 2
    for gx, gW in runs[1:]:
        np.testing.assert_array_equal(gx, runs[0][0])
        np.testing.assert_array_equal(gW, runs[0][1])
