"""The recurrent functions against outputs and gradients that Chainer 7.8.1 computed.

The fixture ``fixtures/rnn_chainer.npz`` is written by ``fixtures/make_rnn_chainer.py``
(see its docstring for the keys); everything in it is float64.
"""

import os

import numpy
import pytest

import dbr.functions as F
from dbr.core import Variable, grad, testing

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "rnn_chainer.npz")
N_LAYERS = 2
TOL = {"atol": 1e-12, "rtol": 1e-10}

# name: (function, directions, weights per layer and direction, has a cell, extra kwargs)
CASES = {
    "lstm": (F.n_step_lstm, 1, 8, True, {}),
    "bilstm": (F.n_step_bilstm, 2, 8, True, {}),
    "gru": (F.n_step_gru, 1, 6, False, {}),
    "bigru": (F.n_step_bigru, 2, 6, False, {}),
    "rnn_tanh": (F.n_step_rnn, 1, 2, False, {"activation": "tanh"}),
    "birnn_relu": (F.n_step_birnn, 2, 2, False, {"activation": "relu"}),
}


@pytest.fixture(scope="module")
def chainer_data():
    with numpy.load(FIXTURE, allow_pickle=False) as data:
        return dict(data)


def _case(data, name):
    prefix = name + "/"
    return {k[len(prefix) :]: v for k, v in data.items() if k.startswith(prefix)}


@pytest.mark.parametrize("name", list(CASES))
def test_n_step_functions_match_chainer(chainer_data, name):
    function, directions, n_weights, has_cell, kwargs = CASES[name]
    d = _case(chainer_data, name)
    n_rnn = N_LAYERS * directions
    n_steps = sum(1 for k in d if k.startswith("x"))
    hx = Variable(d["hx"])
    cx = Variable(d["cx"]) if has_cell else None
    ws = [[Variable(d[f"w{k}_{j}"]) for j in range(n_weights)] for k in range(n_rnn)]
    bs = [[Variable(d[f"b{k}_{j}"]) for j in range(n_weights)] for k in range(n_rnn)]
    xs = [Variable(d[f"x{t}"]) for t in range(n_steps)]

    args = (N_LAYERS, 0.0, hx) + ((cx,) if has_cell else ()) + (ws, bs, xs)
    out = function(*args, **kwargs)
    hy, cy, ys = out if has_cell else (out[0], None, out[1])

    testing.assert_allclose(hy.array, d["hy"], **TOL)
    if has_cell:
        testing.assert_allclose(cy.array, d["cy"], **TOL)
    assert len(ys) == n_steps
    for t, y in enumerate(ys):
        testing.assert_allclose(y.array, d[f"y{t}"], **TOL)

    outputs = [hy] + ([cy] if has_cell else []) + list(ys)
    g_outputs = (
        [d["ghy"]] + ([d["gcy"]] if has_cell else []) + [d[f"gy{t}"] for t in range(n_steps)]
    )
    names = ["hx"] + (["cx"] if has_cell else []) + [f"x{t}" for t in range(n_steps)]
    inputs = [hx] + ([cx] if has_cell else []) + xs
    for k in range(n_rnn):
        names += [f"w{k}_{j}" for j in range(n_weights)] + [f"b{k}_{j}" for j in range(n_weights)]
        inputs += ws[k] + bs[k]
    # the fused backward, then the recorded (step by step) one
    for double in (False, True):
        grads = grad(outputs, inputs, g_outputs, enable_double_backprop=double)
        for key, g in zip(names, grads):
            numpy.testing.assert_allclose(g.array, d["g_" + key], err_msg=key, **TOL)


def test_slstm_matches_chainer(chainer_data):
    d = _case(chainer_data, "slstm")
    inputs = [Variable(d[k]) for k in ("c1", "c2", "x1", "x2")]
    c, h = F.slstm(*inputs)
    testing.assert_allclose(c.array, d["c"], **TOL)
    testing.assert_allclose(h.array, d["h"], **TOL)
    grads = grad([c, h], inputs, [d["gc"], d["gh"]])
    for key, g in zip(("c1", "c2", "x1", "x2"), grads):
        numpy.testing.assert_allclose(g.array, d["g_" + key], err_msg=key, **TOL)
