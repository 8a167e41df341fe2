import numpy
import pytest

import dbr.functions as F
from dbr.core import Variable
from dbr.functions import _tuning
from dbr.functions.rnn import _n_step


@pytest.fixture(params=[False, True], ids=["one-product", "blocked"])
def small_kernels(request, monkeypatch):
    # Both ways run on every machine, whatever its BLAS would choose.
    monkeypatch.setattr(_tuning, "SMALL_MATRIX_KERNELS", request.param)
    return request.param


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
@pytest.mark.parametrize("gates, units, batch", [(1024, 256, 20), (160, 40, 3), (12, 3, 2)])
def test_step_products_match_float64_products(small_kernels, dtype, gates, units, batch):
    rng = numpy.random.default_rng(0)
    w = rng.standard_normal((gates, units)).astype(dtype)
    h = rng.standard_normal((batch, units)).astype(dtype)
    p = rng.standard_normal((batch, gates)).astype(dtype)
    g = rng.standard_normal((batch, gates)).astype(dtype)
    products = _n_step.StepProducts(w, batch)
    blocked = small_kernels and dtype == numpy.float32 and gates > 64
    assert (products.block is not None) == blocked
    out = numpy.empty((batch, gates), dtype)
    products.forward(h, p, out)
    w64, h64 = w.astype(numpy.float64), h.astype(numpy.float64)
    tol = {"rtol": 1e-2, "atol": 1e-1} if dtype == numpy.float16 else {"rtol": 1e-4, "atol": 1e-4}
    numpy.testing.assert_allclose(out, p.astype(numpy.float64) + h64 @ w64.T, **tol)
    back = products.backward(g, dtype)
    assert back.dtype == dtype and back.shape == (batch, units)
    numpy.testing.assert_allclose(back, g.astype(numpy.float64) @ w64, **tol)


def test_blocks_keep_each_product_within_the_small_matrix_size():
    # rows x block x depth stays at most SMALL_PRODUCT_MAX, and a block is narrower than W.
    assert _n_step._block(20, 256, 1024) == 128
    assert _n_step._block(20, 650, 2600) == 64
    assert _n_step._block(64, 650, 2600) is None
    assert _n_step._block(2, 3, 12) is None


def test_small_matrix_kernel_detection_gives_a_bool():
    assert isinstance(_tuning.has_small_matrix_kernels(), bool)


_N_WEIGHTS = {"lstm": 8, "gru": 6, "rnn_tanh": 2, "rnn_relu": 2}


def _values_and_gradients(kind, units, batches, n_in):
    rng = numpy.random.default_rng(1)

    def f32(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(numpy.float32)

    n_weights = _N_WEIGHTS[kind]
    n_x = n_weights // 2
    xs = [Variable(f32(b, n_in)) for b in batches]
    ws = [[Variable(f32(units, n_in if j < n_x else units)) for j in range(n_weights)]]
    bs = [[Variable(f32(units)) for _ in range(n_weights)]]
    h0 = Variable(f32(1, batches[0], units))
    c0 = Variable(f32(1, batches[0], units))
    if kind == "lstm":
        hy, cy, ys = F.n_step_lstm(1, 0.0, h0, c0, ws, bs, xs)
        states = [h0, c0]
    elif kind == "gru":
        hy, ys = F.n_step_gru(1, 0.0, h0, ws, bs, xs)
        cy, states = hy, [h0]
    else:
        hy, ys = F.n_step_rnn(1, 0.0, h0, ws, bs, xs, activation=kind[4:])
        cy, states = hy, [h0]
    loss = F.sum(F.concat(ys, axis=0) * f32(sum(batches), units)) + F.sum(hy * cy)
    loss.backward()
    arrays = [hy.array, cy.array] + [y.array for y in ys]
    grads = [v.grad for v in xs + ws[0] + bs[0] + states]
    return arrays, grads


@pytest.mark.parametrize("kind", sorted(_N_WEIGHTS))
def test_n_step_rnns_give_the_same_values_and_gradients_both_ways(monkeypatch, kind):
    # 80 units: the LSTM's 320 and the GRU's 240 weight rows are blocked by 128,
    # the RNN's 80 by 64.
    results = []
    for small in (False, True):
        monkeypatch.setattr(_tuning, "SMALL_MATRIX_KERNELS", small)
        results.append(_values_and_gradients(kind, 80, [5, 5, 3, 1], 7))
    (a0, g0), (a1, g1) = results
    for x, y in zip(a0 + g0, a1 + g1):
        # float32 rounding, relative to each array's largest element (sums cancel).
        numpy.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5 * numpy.abs(y).max())


@pytest.mark.parametrize("kind", sorted(_N_WEIGHTS))
def test_a_layer_keeps_its_inputs_but_not_their_projection(kind):
    # The projection P (sum B_t rows by the gate width) is what the backward would
    # hold beyond the inputs; the layer node recomputes it instead of keeping it.
    rng = numpy.random.default_rng(2)
    units, batches, n_in = 6, [3, 2, 2], 4
    n_weights = _N_WEIGHTS[kind]
    xs = [rng.standard_normal((b, n_in)).astype(numpy.float32) for b in batches]
    ws = [
        [
            rng.standard_normal((units, n_in if j < n_weights // 2 else units)).astype(
                numpy.float32
            )
            for j in range(n_weights)
        ]
    ]
    bs = [[numpy.zeros(units, numpy.float32) for _ in range(n_weights)]]
    h0 = numpy.zeros((1, 3, units), numpy.float32)
    if kind == "lstm":
        hy = F.n_step_lstm(1, 0.0, h0, h0, ws, bs, xs)[0]
    elif kind == "gru":
        hy = F.n_step_gru(1, 0.0, h0, ws, bs, xs)[0]
    else:
        hy = F.n_step_rnn(1, 0.0, h0, ws, bs, xs, activation=kind[4:])[0]
    layer = hy.creator.inputs[0].creator
    assert type(layer).__name__.endswith("Layer")
    kept = [v.shape for v in layer.get_retained_inputs()]
    gates = {"lstm": 4, "gru": 3}.get(kind, 1) * units
    assert kept[:4] == [(sum(batches), n_in), (gates, n_in), (gates,), (3, units)]
    assert (sum(batches), gates) not in kept
