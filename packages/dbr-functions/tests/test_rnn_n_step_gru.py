import numpy
import pytest

from dbr.core import Variable, grad, no_backprop_mode, testing, using_config
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.sigmoid import sigmoid as f_sigmoid
from dbr.functions.activation.tanh import tanh as f_tanh
from dbr.functions.array.concat import concat
from dbr.functions.connection.linear import linear
from dbr.functions.noise.dropout import dropout
from dbr.functions.rnn.n_step_gru import n_step_bigru, n_step_gru

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
N_IN, N_UNITS = 3, 2


@pytest.fixture(autouse=True)
def _keep_numpy_random_state():
    state = numpy.random.get_state()
    yield
    numpy.random.set_state(state)


def sigmoid(x):
    return 1.0 / (1.0 + numpy.exp(-x))


def make_inputs(n_layers, directions, batches, dtype, n_rows=None, scale=0.5):
    """hx, ws, bs, xs with Chainer's shapes, uniform in [-scale, scale]."""

    def uniform(*shape):
        return numpy.random.uniform(-scale, scale, shape).astype(dtype)

    n_rows = batches[0] if n_rows is None else n_rows
    n_rnn = n_layers * directions
    hx = uniform(n_rnn, n_rows, N_UNITS)
    ws, bs = [], []
    for k in range(n_rnn):
        width = N_IN if k < directions else N_UNITS * directions
        ws.append([uniform(N_UNITS, width if j < 3 else N_UNITS) for j in range(6)])
        bs.append([uniform(N_UNITS) for _ in range(6)])
    xs = [uniform(b, N_IN) for b in batches]
    return hx, ws, bs, xs


def flatten(hx, ws, bs, xs):
    return (hx, *[w for g in ws for w in g], *[b for g in bs for b in g], *xs)


def unflatten(flat, n_rnn):
    hx = flat[0]
    rest = flat[1:]
    ws = [list(rest[6 * k : 6 * k + 6]) for k in range(n_rnn)]
    rest = rest[6 * n_rnn :]
    bs = [list(rest[6 * k : 6 * k + 6]) for k in range(n_rnn)]
    return hx, ws, bs, list(rest[6 * n_rnn :])


def reference_layer(xs, h, w, b, reverse, masks=None):
    """One direction of one layer, step by step in float64 (``masks`` scale the inputs)."""
    h = h.astype(numpy.float64)
    w = [m.astype(numpy.float64) for m in w]
    b = [v.astype(numpy.float64) for v in b]
    ys = [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        x = xs[t].astype(numpy.float64)
        if masks is not None:
            x = x * masks[t]
        n = len(x)
        hp = h[:n]
        r = sigmoid(x @ w[0].T + hp @ w[3].T + b[0] + b[3])
        z = sigmoid(x @ w[1].T + hp @ w[4].T + b[1] + b[4])
        candidate = numpy.tanh(x @ w[2].T + b[2] + r * (hp @ w[5].T + b[5]))
        h[:n] = (1 - z) * candidate + z * hp
        ys[t] = h[:n].copy()
    return h, ys


def reference(n_layers, directions, hx, ws, bs, xs, masks=None):
    hy = []
    inputs = xs
    for layer in range(n_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            m = None if masks is None or layer == 0 else masks[k]
            h, ys = reference_layer(inputs, hx[k], ws[k], bs[k], d == 1, m)
            hy.append(h)
            outs.append(ys)
        inputs = outs[0] if directions == 1 else [numpy.concatenate(p, 1) for p in zip(*outs)]
    return numpy.stack(hy), inputs


def run(directions, *args, **kwargs):
    return (n_step_bigru if directions == 2 else n_step_gru)(*args, **kwargs)


@testing.parameterize(
    *testing.product(
        {
            "n_layers": [1, 2],
            "directions": [1, 2],
            "batches": [[3, 2, 2, 1], [2, 2], [1]],
            "dtype": FLOATS,
        }
    )
)
class TestNStepGRU(FunctionTestCase):
    def generate_inputs(self):
        return flatten(*make_inputs(self.n_layers, self.directions, self.batches, self.dtype))

    def forward(self, inputs, device):
        hx, ws, bs, xs = unflatten(inputs, self.n_layers * self.directions)
        hy, ys = run(self.directions, self.n_layers, 0.0, hx, ws, bs, xs)
        return (hy, *ys)

    def forward_expected(self, inputs):
        hx, ws, bs, xs = unflatten(inputs, self.n_layers * self.directions)
        hy, ys = reference(self.n_layers, self.directions, hx, ws, bs, xs)
        return tuple(a.astype(self.dtype) for a in (hy, *ys))


def composed_gru(n_layers, directions, hx, ws, bs, xs):
    """The same network step by step with linear, sigmoid and tanh."""
    hy = []
    inputs = xs
    for layer in range(n_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            w, b = ws[k], bs[k]
            h = hx[k]
            ys = [None] * len(inputs)
            steps = range(len(inputs) - 1, -1, -1) if d == 1 else range(len(inputs))
            for t in steps:
                x = inputs[t]
                n = x.shape[0]
                hp = h[:n] if h.shape[0] > n else h
                r = f_sigmoid(linear(x, w[0], b[0]) + linear(hp, w[3], b[3]))
                z = f_sigmoid(linear(x, w[1], b[1]) + linear(hp, w[4], b[4]))
                candidate = f_tanh(linear(x, w[2], b[2]) + r * linear(hp, w[5], b[5]))
                h_new = (1.0 - z) * candidate + z * hp
                h = concat([h_new, h[n:]], axis=0) if h.shape[0] > n else h_new
                ys[t] = h_new
            hy.append(h)
            outs.append(ys)
        inputs = outs[0] if directions == 1 else [concat(p, axis=1) for p in zip(*outs)]
    return hy, inputs


@pytest.mark.parametrize("directions", [1, 2])
@pytest.mark.parametrize("n_rows", [3, 5])
def test_matches_the_step_by_step_composition_of_linear(directions, n_rows):
    n_layers = 2
    arrays = make_inputs(n_layers, directions, [3, 3, 2, 1], numpy.float64, n_rows=n_rows)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, ws, bs, xs = unflatten(flat, n_layers * directions)
    hy, ys = run(directions, n_layers, 0.0, hx, ws, bs, xs)
    hy_c, ys_c = composed_gru(n_layers, directions, hx, ws, bs, xs)
    tol = {"atol": 1e-12, "rtol": 1e-10}
    for k in range(n_layers * directions):
        testing.assert_allclose(hy.array[k], hy_c[k].array, **tol)
    for y, y_c in zip(ys, ys_c):
        testing.assert_allclose(y.array, y_c.array, **tol)
    g_outputs = [numpy.random.uniform(-1, 1, y.shape) for y in (hy, *ys)]
    grads = grad([hy, *ys], flat, g_outputs)
    grads_c = grad([*hy_c, *ys_c], flat, [*g_outputs[0], *g_outputs[1:]])
    for g, g_c in zip(grads, grads_c):
        testing.assert_allclose(g.array, g_c.array, **tol)


@pytest.mark.parametrize("directions", [1, 2])
def test_fused_and_recorded_backward_agree(directions):
    arrays = make_inputs(2, directions, [4, 3, 1], numpy.float64, n_rows=5)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, ws, bs, xs = unflatten(flat, 2 * directions)
    hy, ys = run(directions, 2, 0.0, hx, ws, bs, xs)
    outputs = [hy, ys[0]]
    gys = [numpy.random.uniform(-1, 1, y.shape) for y in outputs]
    fused = grad(outputs, flat, gys)
    recorded = grad(outputs, flat, gys, enable_double_backprop=True)
    for g, g_r in zip(fused, recorded):
        testing.assert_allclose(g.array, g_r.array, atol=1e-13, rtol=1e-11)


def test_rows_beyond_the_first_batch_pass_through():
    arrays = make_inputs(1, 1, [2, 1], numpy.float64, n_rows=4)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, ws, bs, xs = unflatten(flat, 1)
    hy, ys = n_step_gru(1, 0.0, hx, ws, bs, xs)
    numpy.testing.assert_array_equal(hy.array[:, 2:], hx.array[:, 2:])
    g_hx = grad([hy], [hx], [numpy.ones(hy.shape)])[0]
    numpy.testing.assert_array_equal(g_hx.array[:, 2:], 1.0)


@pytest.mark.parametrize("directions", [1, 2])
def test_dropout_applies_to_the_inputs_of_upper_layers(directions):
    n_layers, ratio = 3, 0.4
    batches = [3, 2, 2]
    hx, ws, bs, xs = make_inputs(n_layers, directions, batches, numpy.float64)
    numpy.random.seed(5)
    hy, ys = run(directions, n_layers, ratio, hx, ws, bs, xs)
    numpy.random.seed(5)
    width = N_UNITS * directions
    masks = [None] * (n_layers * directions)
    for k in range(directions, n_layers * directions):
        mask = dropout(numpy.ones((sum(batches), width)), ratio, return_mask=True)[1]
        masks[k] = numpy.split(mask, numpy.cumsum(batches)[:-1])
    hy_e, ys_e = reference(n_layers, directions, hx, ws, bs, xs, masks)
    testing.assert_allclose(hy.array, hy_e, atol=1e-12, rtol=1e-10)
    for y, y_e in zip(ys, ys_e):
        testing.assert_allclose(y.array, y_e, atol=1e-12, rtol=1e-10)
    with using_config("train", False):
        hy_test, _ = run(directions, n_layers, ratio, hx, ws, bs, xs)
    hy_none, _ = run(directions, n_layers, 0.0, hx, ws, bs, xs)
    numpy.testing.assert_array_equal(hy_test.array, hy_none.array)


def test_without_backprop():
    arrays = make_inputs(2, 2, [3, 1], numpy.float32)
    with no_backprop_mode():
        hy, ys = n_step_bigru(2, 0.0, *arrays)
    hy_e, ys_e = reference(2, 2, *arrays)
    testing.assert_allclose(hy.array, hy_e, **testing.tolerances(numpy.float32))
    assert hy.creator is None


def test_bad_arguments():
    hx, ws, bs, xs = make_inputs(2, 1, [2, 1], numpy.float32)
    with pytest.raises(ValueError, match=r"n_step_gru: expected ws\[0\] to hold 6 arrays, got 8"):
        n_step_gru(2, 0.0, hx, [ws[0] + ws[0][:2], ws[1]], bs, xs)
    with pytest.raises(ValueError, match=r"n_step_bigru: expected bs to hold 4 lists"):
        n_step_bigru(2, 0.0, hx, ws + ws, bs, xs)
    with pytest.raises(ValueError, match=r"n_step_gru: the use_cudnn argument is not supported"):
        n_step_gru(2, 0.0, hx, ws, bs, xs, use_cudnn=False)
    with pytest.raises(ValueError, match=r"n_step_gru: expected dropout_ratio in \[0, 1\)"):
        n_step_gru(2, -0.1, hx, ws, bs, xs)


def test_bad_input():
    hx, ws, bs, xs = make_inputs(2, 1, [2, 1], numpy.float32)
    with pytest.raises(InvalidType) as e:
        n_step_gru(2, 0.0, hx[:, :, :1], ws, bs, xs)
    assert "n_step_gru (Forward)" in str(e.value) and "ws[0][0].shape == (1, 3)" in str(e.value)
    bad_ws = [list(g) for g in ws]
    bad_ws[1][0] = numpy.zeros((N_UNITS, N_IN), numpy.float32)
    with pytest.raises(InvalidType) as e:
        n_step_gru(2, 0.0, hx, bad_ws, bs, xs)
    assert f"ws[1][0].shape == {(N_UNITS, N_UNITS)}" in str(e.value)
    with pytest.raises(InvalidType) as e:
        n_step_gru(2, 0.0, hx, ws, bs, xs[::-1])
    assert "sorted by decreasing length" in str(e.value)
