"""The n-step RNNs (LSTM, GRU, RNN; one or two directions) at the lowest and highest opset."""

import numpy
import pytest

import dbr.functions as F

rng = numpy.random.default_rng(5)

# name -> (function, weights per layer and direction, takes cx, extra keyword arguments)
FUNCTIONS = {
    "n_step_lstm": (F.n_step_lstm, 8, 1, True, {}),
    "n_step_bilstm": (F.n_step_bilstm, 8, 2, True, {}),
    "n_step_gru": (F.n_step_gru, 6, 1, False, {}),
    "n_step_bigru": (F.n_step_bigru, 6, 2, False, {}),
    "n_step_rnn": (F.n_step_rnn, 2, 1, False, {}),
    "n_step_birnn_relu": (F.n_step_birnn, 2, 2, False, {"activation": "relu"}),
}


def _weights(n_weights, directions, n_layers, n_in, n_units, dtype):
    params = {}
    half = n_weights // 2
    for k in range(n_layers * directions):
        width_in = n_in if k < directions else n_units * directions
        for j in range(n_weights):
            width = width_in if j < half else n_units
            params[f"w{k}_{j}"] = rng.uniform(-0.5, 0.5, (n_units, width)).astype(dtype)
            params[f"b{k}_{j}"] = rng.uniform(-0.5, 0.5, n_units).astype(dtype)
    return params


def _model(tools, name, n_layers, n_in, n_units, dtype, dropout_ratio=0.0):
    function, n_weights, directions, has_cell, kwargs = FUNCTIONS[name]
    params = _weights(n_weights, directions, n_layers, n_in, n_units, dtype)
    n_rnn = n_layers * directions

    def forward(m, hx, *rest):
        ws = [[getattr(m, f"w{k}_{j}") for j in range(n_weights)] for k in range(n_rnn)]
        bs = [[getattr(m, f"b{k}_{j}") for j in range(n_weights)] for k in range(n_rnn)]
        if has_cell:
            cx, *xs = rest
            hy, cy, ys = function(n_layers, dropout_ratio, hx, cx, ws, bs, xs, **kwargs)
            return (hy, cy, *ys)
        hy, ys = function(n_layers, dropout_ratio, hx, ws, bs, rest, **kwargs)
        return (hy, *ys)

    return tools.FunctionModel(forward, **params), n_rnn, has_cell


def _inputs(n_rnn, has_cell, n_rows, batches, n_in, n_units, dtype):
    hx = rng.uniform(-1, 1, (n_rnn, n_rows, n_units)).astype(dtype)
    xs = [rng.uniform(-1, 1, (b, n_in)).astype(dtype) for b in batches]
    if has_cell:
        return [hx, rng.uniform(-1, 1, hx.shape).astype(dtype), *xs]
    return [hx, *xs]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_n_step_variable_lengths(tools, name):
    # Four rows of state, sequences of lengths 3, 2, 2 and none (the last row keeps its state).
    model, n_rnn, has_cell = _model(tools, name, 2, 3, 4, numpy.float32)
    inputs = _inputs(n_rnn, has_cell, 4, (3, 3, 1), 3, 4, numpy.float32)
    tools.check_export(model, inputs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["n_step_lstm", "n_step_bigru", "n_step_rnn"])
def test_n_step_one_step_and_dropout_in_test_mode(tools, name):
    model, n_rnn, has_cell = _model(tools, name, 2, 5, 3, numpy.float32, dropout_ratio=0.5)
    inputs = _inputs(n_rnn, has_cell, 2, (2,), 5, 3, numpy.float32)
    tools.check_export(model, inputs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float16])
@pytest.mark.parametrize("name", ["n_step_bilstm", "n_step_gru", "n_step_birnn_relu"])
def test_n_step_dtypes(tools, name, dtype):
    model, n_rnn, has_cell = _model(tools, name, 1, 3, 4, dtype)
    inputs = _inputs(n_rnn, has_cell, 3, (3, 2), 3, 4, dtype)
    tol = 2e-2 if dtype == numpy.float16 else 1e-7
    tools.check_export(model, inputs, rtol=tol, atol=tol)
