"""The GPU fast paths of the hot functions against NumPy references computed here.

Every test is marked ``gpu`` and skips with the reason without a usable GPU.
"""

import numpy as np
import pytest

import dbr.functions as F
from dbr.core import Variable, backend, using_config
from dbr.core.testing import assert_allclose, get_test_device

pytestmark = pytest.mark.gpu

_DTYPES = [np.float16, np.float32, np.float64]
_TOL = {np.float16: 5e-3, np.float32: 1e-5, np.float64: 1e-10}


@pytest.fixture
def device():
    return get_test_device("@cupy:0")


def _run(device, f, *arrays):
    """``f`` on the GPU copies of ``arrays``: the output and the input gradients (gy = 1)."""
    xs = [Variable(device.send(a)) for a in arrays]
    y = f(*xs)
    y.grad = device.xp.ones(y.shape, y.dtype)
    y.backward()
    return backend.to_cpu(y.array), [backend.to_cpu(x.grad) for x in xs]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    "leaky_relu": (
        lambda x: F.leaky_relu(x, 0.3),
        lambda x: np.where(x >= 0, x, 0.3 * x),
        lambda x: np.where(x >= 0, 1.0, 0.3),
    ),
    "elu": (
        lambda x: F.elu(x, 0.7),
        lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
        lambda x: np.where(x > 0, 1.0, 0.7 * np.exp(x)),
    ),
    "clipped_relu": (
        lambda x: F.clipped_relu(x, 1.5),
        lambda x: np.clip(x, 0, 1.5),
        lambda x: ((x > 0) & (x < 1.5)) * 1.0,
    ),
    "sigmoid": (F.sigmoid, _sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    "tanh": (F.tanh, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "softplus": (
        lambda x: F.softplus(x, 2.0),
        lambda x: np.logaddexp(0, 2 * x) / 2,
        lambda x: _sigmoid(2 * x),
    ),
    "hard_sigmoid": (
        F.hard_sigmoid,
        lambda x: np.clip(0.2 * x + 0.5, 0, 1),
        lambda x: ((x > -2.5) & (x < 2.5)) * 0.2,
    ),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", sorted(_ACTIVATIONS))
def test_activation(device, name, dtype):
    f, forward, derivative = _ACTIVATIONS[name]
    x = np.random.default_rng(0).uniform(-4, 4, (3, 5, 7)).astype(dtype)
    # Keep away from the kinks, where the two sides differ.
    x[np.abs(x) < 0.05] = 0.5
    x[np.abs(np.abs(x) - 2.5) < 0.05] = 1.0
    x[np.abs(x - 1.5) < 0.05] = 1.0
    y, (gx,) = _run(device, f, x)
    x64 = x.astype(np.float64)
    tol = _TOL[dtype]
    assert y.dtype == dtype and gx.dtype == dtype
    assert_allclose(y, forward(x64), atol=tol, rtol=tol)
    assert_allclose(gx, derivative(x64), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_swish(device, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    beta = rng.standard_normal(3).astype(dtype)
    y, _ = _run(device, F.swish, x, beta)
    x64, b64 = x.astype(np.float64), beta.astype(np.float64)[None, :, None]
    tol = _TOL[dtype]
    assert_allclose(y, x64 * _sigmoid(b64 * x64), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_dropout_mask_and_gradient(device, dtype):
    x = np.random.default_rng(2).standard_normal((100, 50)).astype(dtype)
    xv = Variable(device.send(x))
    y, mask = F.dropout(xv, 0.3, return_mask=True)
    y.grad = device.xp.full(y.shape, 2, dtype)
    y.backward()
    mask = backend.to_cpu(mask)
    scale = dtype(1 / 0.7)
    assert set(np.unique(mask)) <= {0, scale}
    assert 0.2 < (mask == 0).mean() < 0.4
    assert_allclose(backend.to_cpu(y.array), x * mask, atol=0, rtol=0)
    assert_allclose(backend.to_cpu(xv.grad), 2 * mask, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5, 2)])
def test_batch_normalization(device, dtype, shape):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, 3).astype(dtype)
    beta = rng.standard_normal(3).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    axes = (0,) + tuple(range(2, len(shape)))
    cshape = (1, 3) + (1,) * (len(shape) - 2)
    x64, g64 = x.astype(np.float64), gamma.astype(np.float64).reshape(cshape)
    mean, var = x64.mean(axes, keepdims=True), x64.var(axes, keepdims=True)
    inv_std = 1 / np.sqrt(var + 2e-5)
    x_hat = (x64 - mean) * inv_std
    expected_y = g64 * x_hat + beta.astype(np.float64).reshape(cshape)
    gy64 = gy.astype(np.float64)
    m = x.size // 3
    gbeta = gy64.sum(axes, keepdims=True)
    ggamma = (gy64 * x_hat).sum(axes, keepdims=True)
    expected_gx = g64 * inv_std * (gy64 - (gbeta + x_hat * ggamma) / m)
    running_mean = device.send(np.zeros(3, dtype))
    running_var = device.send(np.ones(3, dtype))
    xs = [Variable(device.send(a)) for a in (x, gamma, beta)]
    y = F.batch_normalization(*xs, running_mean=running_mean, running_var=running_var)
    y.grad = device.send(gy)
    y.backward()
    tol = 1e-2 if dtype == np.float16 else 1e-4
    assert_allclose(backend.to_cpu(y.array), expected_y, atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(xs[0].grad), expected_gx, atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(xs[1].grad), ggamma.ravel(), atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(xs[2].grad), gbeta.ravel(), atol=tol, rtol=tol)
    expected_running = 0.1 * mean.ravel()
    assert_allclose(backend.to_cpu(running_mean), expected_running, atol=tol, rtol=tol)
    unbiased = 0.9 + 0.1 * var.ravel() * m / (m - 1)
    assert_allclose(backend.to_cpu(running_var), unbiased, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_fixed_batch_normalization(device, dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 4, 3)).astype(dtype)
    gamma, beta, mean = (rng.standard_normal(4).astype(dtype) for _ in range(3))
    var = rng.uniform(0.5, 2, 4).astype(dtype)
    y, _ = _run(
        device, lambda *a: F.fixed_batch_normalization(*a, eps=1e-3), x, gamma, beta, mean, var
    )
    c = [a.astype(np.float64)[None, :, None] for a in (gamma, beta, mean, var)]
    expected = c[0] * (x - c[2]) / np.sqrt(c[3] + 1e-3) + c[1]
    tol = 1e-2 if dtype == np.float16 else 1e-5
    assert_allclose(y, expected, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("extra_rows", [0, 2])
def test_lstm(device, dtype, extra_rows):
    rng = np.random.default_rng(5)
    batch, units = 3, 4
    c_prev = rng.standard_normal((batch + extra_rows, units)).astype(dtype)
    x = rng.standard_normal((batch, 4 * units)).astype(dtype)
    gc = rng.standard_normal(c_prev.shape).astype(dtype)
    gh = rng.standard_normal((batch, units)).astype(dtype)
    c64, x64 = c_prev.astype(np.float64), x.astype(np.float64).reshape(batch, units, 4)
    a, i, f, o = np.tanh(x64[..., 0]), *(_sigmoid(x64[..., k]) for k in (1, 2, 3))
    c_new = c64.copy()
    c_new[:batch] = a * i + f * c64[:batch]
    h = o * np.tanh(c_new[:batch])
    gct = gh * o * (1 - np.tanh(c_new[:batch]) ** 2) + gc[:batch]
    gx = np.stack(
        [
            gct * i * (1 - a * a),
            gct * a * i * (1 - i),
            gct * c64[:batch] * f * (1 - f),
            gh * np.tanh(c_new[:batch]) * o * (1 - o),
        ],
        axis=2,
    ).reshape(batch, 4 * units)
    gc_prev = gc.astype(np.float64).copy()
    gc_prev[:batch] = gct * f
    cv, xv = Variable(device.send(c_prev)), Variable(device.send(x))
    c, hv = F.lstm(cv, xv)
    loss = F.sum(c * device.send(gc)) + F.sum(hv * device.send(gh))
    loss.backward()
    tol = 1e-2 if dtype == np.float16 else 1e-5
    assert_allclose(backend.to_cpu(c.array), c_new, atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(hv.array), h, atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(xv.grad), gx, atol=tol, rtol=tol)
    assert_allclose(backend.to_cpu(cv.grad), gc_prev, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("reduce", ["mean", "no"])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cache_score", [True, False])
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 2, 2)])
def test_softmax_cross_entropy(device, dtype, reduce, normalize, weighted, cache_score, shape):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(dtype) * 3
    t_shape = (shape[0],) + shape[2:]
    t = rng.integers(0, shape[1], t_shape).astype(np.int32)
    t.flat[1] = 7  # ignored
    cw = rng.uniform(0.5, 2, shape[1]).astype(dtype) if weighted else None
    x64 = x.astype(np.float64)
    log_y = x64 - x64.max(1, keepdims=True)
    log_y -= np.log(np.exp(log_y).sum(1, keepdims=True))
    valid = t != 7
    labels = np.where(valid, t, 0)
    w = valid * (1.0 if cw is None else cw.astype(np.float64)[labels])
    picked = np.take_along_axis(log_y, labels[:, None], axis=1)[:, 0]
    nll = -picked * w
    onehot = np.moveaxis(np.eye(shape[1])[labels], -1, 1)
    grad = (np.exp(log_y) - onehot) * w[:, None]
    if reduce == "mean":
        count = valid.sum() if normalize else shape[0]
        expected, expected_gx = nll.sum() / count, grad / count
    else:
        expected, expected_gx = nll, grad
    loss, (gx,) = _run(
        device,
        lambda v: F.softmax_cross_entropy(
            v,
            device.send(t),
            normalize=normalize,
            cache_score=cache_score,
            class_weight=None if cw is None else device.send(cw),
            ignore_label=7,
            reduce=reduce,
        ),
        x,
    )
    tol = 2e-2 if dtype == np.float16 else 1e-5
    assert loss.dtype == dtype
    assert_allclose(loss, expected, atol=tol, rtol=tol)
    assert_allclose(gx, expected_gx, atol=tol, rtol=tol)


# -- convolutions: cuDNN and im2col + matmul against each other and against NumPy ----------

_CONV_CASES = [
    # (spatial shape, ksize, stride, pad, dilate, groups)
    ((9,), (3,), 1, 1, 1, 1),
    ((7, 8), (3, 2), 2, 1, 1, 1),
    ((7, 8), (3, 3), 1, 2, 2, 2),
    ((5, 4, 6), (2, 3, 2), (1, 2, 1), (1, 0, 1), 1, 2),
]


def _conv_grads(device, x, W, b, stride, pad, dilate, groups, gy, use_cudnn):
    xs = [Variable(device.send(a)) for a in (x, W, b)]
    with using_config("use_cudnn", use_cudnn):
        y = F.convolution_nd(*xs, stride=stride, pad=pad, dilate=dilate, groups=groups)
        y.grad = device.send(gy)
        y.backward()
    return [backend.to_cpu(v) for v in (y.array, xs[0].grad, xs[1].grad, xs[2].grad)]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("case", _CONV_CASES)
def test_convolution_cudnn_and_im2col(device, dtype, case):
    from dbr.gpu import cudnn

    if not cudnn.available():
        pytest.skip("cuDNN (nvidia-cudnn-frontend) is not available")
    size, ksize, stride, pad, dilate, groups = case
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4) + size).astype(dtype)
    W = rng.standard_normal((6, 4 // groups) + ksize).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)
    with using_config("use_cudnn", "never"):
        probe = F.convolution_nd(x, W, b, stride=stride, pad=pad, dilate=dilate, groups=groups)
    gy = rng.standard_normal(probe.shape).astype(dtype)
    xs = [Variable(a.astype(np.float64)) for a in (x, W, b)]
    y = F.convolution_nd(*xs, stride=stride, pad=pad, dilate=dilate, groups=groups)
    y.grad = gy.astype(np.float64)
    y.backward()
    cpu = [y.array] + [v.grad for v in xs]
    fast = _conv_grads(device, x, W, b, stride, pad, dilate, groups, gy, "always")
    slow = _conv_grads(device, x, W, b, stride, pad, dilate, groups, gy, "never")
    tol = 5e-2 if dtype == np.float16 else (1e-3 if dtype == np.float32 else 1e-10)
    for name, f, s, c in zip(("y", "gx", "gW", "gb"), fast, slow, cpu):
        assert f.dtype == dtype, name
        assert_allclose(f, s, atol=tol, rtol=tol)
        assert_allclose(f, c, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("case", _CONV_CASES)
def test_deconvolution_cudnn_and_im2col(device, dtype, case):
    from dbr.gpu import cudnn

    if not cudnn.available():
        pytest.skip("cuDNN (nvidia-cudnn-frontend) is not available")
    size, ksize, stride, pad, dilate, groups = case
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 4) + size).astype(dtype)
    W = rng.standard_normal((4, 6 // groups) + ksize).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)
    opts = {"stride": stride, "pad": pad, "dilate": dilate, "groups": groups}
    xs = [Variable(a.astype(np.float64)) for a in (x, W, b)]
    y = F.deconvolution_nd(*xs, **opts)
    gy = rng.standard_normal(y.shape)
    y.grad = gy
    y.backward()
    cpu = [y.array] + [v.grad for v in xs]
    results = []
    for use in ("always", "never"):
        vs = [Variable(device.send(a)) for a in (x, W, b)]
        with using_config("use_cudnn", use):
            yv = F.deconvolution_nd(*vs, **opts)
            yv.grad = device.send(gy.astype(dtype))
            yv.backward()
        results.append([backend.to_cpu(v) for v in (yv.array, *(u.grad for u in vs))])
    tol = 5e-2 if dtype == np.float16 else (1e-3 if dtype == np.float32 else 1e-10)
    for f, s, c in zip(*results, cpu):
        assert f.dtype == dtype
        assert_allclose(f, s, atol=tol, rtol=tol)
        assert_allclose(f, c, atol=tol, rtol=tol)


def test_convolution_falls_back_when_no_cudnn_engine_takes_it(device, monkeypatch):
    """A configuration cuDNN rejects (CudnnNotSupportedError) is computed by im2col + matmul."""
    from dbr.gpu import cudnn

    if not cudnn.available():
        pytest.skip("cuDNN (nvidia-cudnn-frontend) is not available")
    refused = []

    def refuse(name):
        def operation(*args):
            refused.append(name)
            raise cudnn.CudnnNotSupportedError(f"{name}: no engine (test)")

        return operation

    for name in (
        "convolution_forward",
        "convolution_backward_data",
        "convolution_backward_filter",
    ):
        monkeypatch.setattr(cudnn, name, refuse(name))
    rng = np.random.default_rng(3)
    x, W, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 7, 7), (4, 3, 3, 3), 4))
    gy = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    refused_run = _conv_grads(device, x, W, b, 1, 0, 1, 1, gy, "always")
    assert sorted(set(refused)) == [
        "convolution_backward_data",
        "convolution_backward_filter",
        "convolution_forward",
    ]
    fallback = _conv_grads(device, x, W, b, 1, 0, 1, 1, gy, "never")
    for r, f in zip(refused_run, fallback):
        assert_allclose(r, f, atol=1e-6, rtol=1e-6)
