import numpy
import pytest

from dbr.core import Variable, grad, no_backprop_mode, testing, using_config
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.concat import concat
from dbr.functions.connection.linear import linear
from dbr.functions.noise.dropout import dropout
from dbr.functions.rnn.lstm import lstm
from dbr.functions.rnn.n_step_lstm import n_step_bilstm, n_step_lstm

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
    """hx, cx, ws, bs, xs with Chainer's shapes, uniform in [-scale, scale]."""

    def uniform(*shape):
        return numpy.random.uniform(-scale, scale, shape).astype(dtype)

    n_rows = batches[0] if n_rows is None else n_rows
    n_rnn = n_layers * directions
    hx = uniform(n_rnn, n_rows, N_UNITS)
    cx = uniform(n_rnn, n_rows, N_UNITS)
    ws, bs = [], []
    for k in range(n_rnn):
        width = N_IN if k < directions else N_UNITS * directions
        ws.append([uniform(N_UNITS, width if j < 4 else N_UNITS) for j in range(8)])
        bs.append([uniform(N_UNITS) for _ in range(8)])
    xs = [uniform(b, N_IN) for b in batches]
    return hx, cx, ws, bs, xs


def flatten(hx, cx, ws, bs, xs):
    return (hx, cx, *[w for g in ws for w in g], *[b for g in bs for b in g], *xs)


def unflatten(flat, n_rnn):
    hx, cx = flat[:2]
    rest = flat[2:]
    ws = [list(rest[8 * k : 8 * k + 8]) for k in range(n_rnn)]
    rest = rest[8 * n_rnn :]
    bs = [list(rest[8 * k : 8 * k + 8]) for k in range(n_rnn)]
    return hx, cx, ws, bs, list(rest[8 * n_rnn :])


def reference_layer(xs, h, c, w, b, reverse, masks=None):
    """One direction of one layer, step by step in float64 (``masks`` scale the inputs)."""
    h = h.astype(numpy.float64)
    c = c.astype(numpy.float64)
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

        pre = [x @ w[j].T + hp @ w[j + 4].T + b[j] + b[j + 4] for j in range(4)]
        # Chainer's roles: W_0 input gate, W_1 forget gate, W_2 cell input, W_3 output gate
        i = sigmoid(pre[0])
        f = sigmoid(pre[1])
        a = numpy.tanh(pre[2])
        o = sigmoid(pre[3])
        c[:n] = f * c[:n] + i * a
        h[:n] = o * numpy.tanh(c[:n])
        ys[t] = h[:n].copy()
    return h, c, ys


def reference(n_layers, directions, hx, cx, ws, bs, xs, masks=None):
    hy, cy = [], []
    inputs = xs
    for layer in range(n_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            m = None if masks is None or layer == 0 else masks[k]
            h, c, ys = reference_layer(inputs, hx[k], cx[k], ws[k], bs[k], d == 1, m)
            hy.append(h)
            cy.append(c)
            outs.append(ys)
        inputs = outs[0] if directions == 1 else [numpy.concatenate(p, 1) for p in zip(*outs)]
    return numpy.stack(hy), numpy.stack(cy), inputs


def run(directions, *args, **kwargs):
    return (n_step_bilstm if directions == 2 else n_step_lstm)(*args, **kwargs)


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
class TestNStepLSTM(FunctionTestCase):
    def generate_inputs(self):
        return flatten(*make_inputs(self.n_layers, self.directions, self.batches, self.dtype))

    def forward(self, inputs, device):
        hx, cx, ws, bs, xs = unflatten(inputs, self.n_layers * self.directions)
        hy, cy, ys = run(self.directions, self.n_layers, 0.0, hx, cx, ws, bs, xs)
        return (hy, cy, *ys)

    def forward_expected(self, inputs):
        hx, cx, ws, bs, xs = unflatten(inputs, self.n_layers * self.directions)
        hy, cy, ys = reference(self.n_layers, self.directions, hx, cx, ws, bs, xs)
        return tuple(a.astype(self.dtype) for a in (hy, cy, *ys))


def composed_lstm(n_layers, directions, hx, cx, ws, bs, xs):
    """The same network step by step with lstm and linear (Chainer's weight stacking)."""
    hy, cy = [], []
    inputs = xs
    for layer in range(n_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            w, b = ws[k], bs[k]
            # lstm interleaves a, i, f, o per unit: W_2, W_0, W_1, W_3
            order = (2, 0, 1, 3)

            def stacked(mats, order=order):
                return concat([m[:, None] for m in mats], axis=1).reshape(
                    (-1,) + mats[0].shape[1:]
                )

            w_x = stacked([w[j] for j in order])
            w_h = stacked([w[j + 4] for j in order])
            bias = stacked([b[j] + b[j + 4] for j in order])
            h, c = hx[k], cx[k]
            ys = [None] * len(inputs)
            steps = range(len(inputs) - 1, -1, -1) if d == 1 else range(len(inputs))
            for t in steps:
                n = inputs[t].shape[0]
                h_run = h[:n] if h.shape[0] > n else h
                c, h_new = lstm(c, linear(inputs[t], w_x, bias) + linear(h_run, w_h))
                h = concat([h_new, h[n:]], axis=0) if h.shape[0] > n else h_new
                ys[t] = h_new
            hy.append(h)
            cy.append(c)
            outs.append(ys)
        inputs = outs[0] if directions == 1 else [concat(p, axis=1) for p in zip(*outs)]
    return hy, cy, inputs


@pytest.mark.parametrize("directions", [1, 2])
@pytest.mark.parametrize("n_rows", [3, 5])
def test_matches_the_step_by_step_composition_of_lstm_and_linear(directions, n_rows):
    n_layers = 2
    batches = [3, 3, 2, 1]
    arrays = make_inputs(n_layers, directions, batches, numpy.float64, n_rows=n_rows)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, cx, ws, bs, xs = unflatten(flat, n_layers * directions)
    hy, cy, ys = run(directions, n_layers, 0.0, hx, cx, ws, bs, xs)
    hy_c, cy_c, ys_c = composed_lstm(n_layers, directions, hx, cx, ws, bs, xs)
    tol = {"atol": 1e-12, "rtol": 1e-10}
    for k in range(n_layers * directions):
        testing.assert_allclose(hy.array[k], hy_c[k].array, **tol)
        testing.assert_allclose(cy.array[k], cy_c[k].array, **tol)
    for y, y_c in zip(ys, ys_c):
        testing.assert_allclose(y.array, y_c.array, **tol)

    outputs = [hy, cy, *ys]
    g_outputs = [numpy.random.uniform(-1, 1, y.shape) for y in outputs]
    grads = grad(outputs, flat, g_outputs)
    composed_outputs = [*hy_c, *cy_c, *ys_c]
    n_rnn = n_layers * directions
    g_composed = [*g_outputs[0], *g_outputs[1], *g_outputs[2:]]
    assert len(composed_outputs) == 2 * n_rnn + len(ys)
    grads_c = grad(composed_outputs, flat, g_composed)
    for g, g_c in zip(grads, grads_c):
        testing.assert_allclose(g.array, g_c.array, **tol)


@pytest.mark.parametrize("directions", [1, 2])
def test_fused_and_recorded_backward_agree(directions):
    # The fused backward runs when the backward is not recorded; the recorded one goes
    # step by step. Both give the same first-order gradients.
    arrays = make_inputs(2, directions, [4, 3, 1], numpy.float64, n_rows=5)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, cx, ws, bs, xs = unflatten(flat, 2 * directions)
    hy, cy, ys = run(directions, 2, 0.0, hx, cx, ws, bs, xs)
    outputs = [hy, ys[1]]  # cy and most ys get no gradient
    gys = [numpy.random.uniform(-1, 1, y.shape) for y in outputs]
    fused = grad(outputs, flat, gys)
    recorded = grad(outputs, flat, gys, enable_double_backprop=True)
    for g, g_r in zip(fused, recorded):
        assert (g is None) == (g_r is None)
        if g is not None:
            testing.assert_allclose(g.array, g_r.array, atol=1e-13, rtol=1e-11)


def test_rows_beyond_the_first_batch_pass_through():
    arrays = make_inputs(1, 1, [2, 1], numpy.float64, n_rows=4)
    flat = [Variable(a) for a in flatten(*arrays)]
    hx, cx, ws, bs, xs = unflatten(flat, 1)
    hy, cy, ys = n_step_lstm(1, 0.0, hx, cx, ws, bs, xs)
    numpy.testing.assert_array_equal(hy.array[:, 2:], hx.array[:, 2:])
    numpy.testing.assert_array_equal(cy.array[:, 2:], cx.array[:, 2:])
    g_hx, g_cx = grad([hy, cy], [hx, cx], [numpy.ones(hy.shape), numpy.full(cy.shape, 2.0)])
    numpy.testing.assert_array_equal(g_hx.array[:, 2:], 1.0)
    numpy.testing.assert_array_equal(g_cx.array[:, 2:], 2.0)


@pytest.mark.parametrize("directions", [1, 2])
def test_dropout_applies_to_the_inputs_of_upper_layers(directions):
    n_layers, ratio = 3, 0.4
    batches = [3, 2, 2]
    hx, cx, ws, bs, xs = make_inputs(n_layers, directions, batches, numpy.float64)
    numpy.random.seed(3)
    hy, cy, ys = run(directions, n_layers, ratio, hx, cx, ws, bs, xs)
    # the same draws, in the same order: one mask per direction of each upper layer
    numpy.random.seed(3)
    width = N_UNITS * directions
    masks = [None] * (n_layers * directions)
    for k in range(directions, n_layers * directions):
        mask = dropout(numpy.ones((sum(batches), width)), ratio, return_mask=True)[1]
        masks[k] = numpy.split(mask, numpy.cumsum(batches)[:-1])
    hy_e, cy_e, ys_e = reference(n_layers, directions, hx, cx, ws, bs, xs, masks)
    testing.assert_allclose(hy.array, hy_e, atol=1e-12, rtol=1e-10)
    testing.assert_allclose(cy.array, cy_e, atol=1e-12, rtol=1e-10)
    for y, y_e in zip(ys, ys_e):
        testing.assert_allclose(y.array, y_e, atol=1e-12, rtol=1e-10)
    assert any(numpy.any(m[0] == 0) for m in masks[directions:])

    with using_config("train", False):
        hy_test, _, _ = run(directions, n_layers, ratio, hx, cx, ws, bs, xs)
    hy_none, _, _ = run(directions, n_layers, 0.0, hx, cx, ws, bs, xs)
    numpy.testing.assert_array_equal(hy_test.array, hy_none.array)


@pytest.mark.parametrize("directions", [1, 2])
def test_a_ratio_of_zero_still_draws_the_masks_as_chainer(directions):
    # Chainer's CPU n_step functions call dropout on every upper layer's
    # input, also at ratio 0, and dropout then draws a mask: numpy.random
    # must advance alike so that a seeded run goes on as Chainer's.
    n_layers, batches = 3, [3, 2, 2]
    hx, cx, ws, bs, xs = make_inputs(n_layers, directions, batches, numpy.float64)
    numpy.random.seed(4)
    hy, _, _ = run(directions, n_layers, 0.0, hx, cx, ws, bs, xs)
    after = numpy.random.rand(3)
    numpy.random.seed(4)
    for _ in range((n_layers - 1) * directions):
        numpy.random.rand(sum(batches), N_UNITS * directions)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))
    hy_e, _, _ = reference(n_layers, directions, hx, cx, ws, bs, xs)
    testing.assert_allclose(hy.array, hy_e, atol=1e-12, rtol=1e-10)
    # In test mode dropout draws nothing, in Chainer as here.
    numpy.random.seed(4)
    with using_config("train", False):
        run(directions, n_layers, 0.0, hx, cx, ws, bs, xs)
    after = numpy.random.rand(3)
    numpy.random.seed(4)
    numpy.testing.assert_array_equal(after, numpy.random.rand(3))


def test_without_backprop():
    arrays = make_inputs(2, 2, [3, 1], numpy.float32)
    with no_backprop_mode():
        hy, cy, ys = n_step_bilstm(2, 0.0, *arrays)
    hy_e, cy_e, ys_e = reference(2, 2, *arrays)
    tol = testing.tolerances(numpy.float32)
    testing.assert_allclose(hy.array, hy_e, **tol)
    testing.assert_allclose(cy.array, cy_e, **tol)
    assert hy.creator is None


def test_one_step_and_one_layer_shapes():
    hx, cx, ws, bs, xs = make_inputs(1, 1, [4], numpy.float32)
    hy, cy, ys = n_step_lstm(1, 0.0, hx, cx, ws, bs, xs)
    assert hy.shape == cy.shape == (1, 4, N_UNITS)
    assert isinstance(ys, tuple) and len(ys) == 1 and ys[0].shape == (4, N_UNITS)
    assert hy.dtype == numpy.float32


def test_bad_arguments():
    hx, cx, ws, bs, xs = make_inputs(2, 1, [2, 1], numpy.float32)
    with pytest.raises(ValueError, match=r"n_step_lstm: expected n_layers >= 1, got 0"):
        n_step_lstm(0, 0.0, hx[:0], cx[:0], [], [], xs)
    with pytest.raises(TypeError, match=r"n_step_lstm: expected n_layers to be an int"):
        n_step_lstm(2.0, 0.0, hx, cx, ws, bs, xs)
    with pytest.raises(ValueError, match=r"n_step_lstm: expected dropout_ratio in \[0, 1\)"):
        n_step_lstm(2, 1.0, hx, cx, ws, bs, xs)
    with pytest.raises(ValueError, match=r"n_step_lstm: expected ws to hold 2 lists"):
        n_step_lstm(2, 0.0, hx, cx, ws[:1], bs, xs)
    with pytest.raises(ValueError, match=r"n_step_lstm: expected bs\[1\] to hold 8 arrays, got 7"):
        n_step_lstm(2, 0.0, hx, cx, ws, [bs[0], bs[1][:7]], xs)
    with pytest.raises(ValueError, match=r"n_step_bilstm: expected ws to hold 4 lists"):
        n_step_bilstm(2, 0.0, hx, cx, ws, bs, xs)
    with pytest.raises(TypeError, match=r"n_step_lstm: expected xs to be a non-empty list"):
        n_step_lstm(2, 0.0, hx, cx, ws, bs, [])
    with pytest.raises(TypeError, match=r"n_step_lstm: expected hx to be a Variable or an array"):
        n_step_lstm(2, 0.0, hx.tolist(), cx, ws, bs, xs)
    with pytest.raises(TypeError, match=r"n_step_lstm: expected ws\[1\]\[3\] to be a Variable"):
        n_step_lstm(2, 0.0, hx, cx, [ws[0], ws[1][:3] + [None] + ws[1][4:]], bs, xs)
    with pytest.raises(ValueError, match=r"n_step_lstm: the train argument is not supported"):
        n_step_lstm(2, 0.0, hx, cx, ws, bs, xs, train=True)
    with pytest.raises(TypeError, match=r"n_step_lstm: got an unexpected keyword argument 'foo'"):
        n_step_lstm(2, 0.0, hx, cx, ws, bs, xs, foo=1)


def test_bad_input():
    hx, cx, ws, bs, xs = make_inputs(2, 1, [2, 1], numpy.float32)

    def check(expect, hx=hx, cx=cx, ws=ws, bs=bs, xs=xs, who=n_step_lstm):
        with pytest.raises(InvalidType) as e:
            who(2, 0.0, hx, cx, ws, bs, xs)
        assert f"{who.__name__} (Forward)" in str(e.value)
        assert expect in str(e.value)

    check("hx.shape == (2, B, N)", hx=hx[0])
    check("hx.shape == (2, B, N)", hx=hx[:1], cx=cx[:1])
    check("hx.dtype.kind == 'f'", hx=hx.astype(numpy.int32))
    check("cx.shape == hx.shape", cx=cx[:, :1])
    check("cx.dtype == hx.dtype", cx=cx.astype(numpy.float64))
    bad_ws = [list(g) for g in ws]
    bad_ws[1][5] = numpy.zeros((N_UNITS, N_UNITS + 1), numpy.float32)
    check(f"ws[1][5].shape == {(N_UNITS, N_UNITS)}", ws=bad_ws)
    bad_ws = [list(g) for g in ws]
    bad_ws[0][2] = ws[0][2].astype(numpy.float64)
    check("ws[0][2].dtype == hx.dtype", ws=bad_ws)
    bad_bs = [list(g) for g in bs]
    bad_bs[0][0] = numpy.zeros((N_UNITS + 1,), numpy.float32)
    check(f"bs[0][0].shape == ({N_UNITS},)", bs=bad_bs)
    check("xs[1].shape[0] <= xs[0].shape[0] (sorted by decreasing length)", xs=xs[::-1])
    check("xs[0].shape[0] <= hx.shape[1]", xs=[numpy.zeros((3, N_IN), numpy.float32)])
    check("xs[1].shape == (B_1, 3)", xs=[xs[0], numpy.zeros((1, N_IN + 1), numpy.float32)])
    check("xs[0].dtype == hx.dtype", xs=[x.astype(numpy.float64) for x in xs])
    check("xs[0].ndim == 2", xs=[xs[0][:, :, None], xs[1]])
    bi = make_inputs(2, 2, [2, 1], numpy.float32)
    bad_ws = [list(g) for g in bi[2]]
    bad_ws[2][0] = numpy.zeros((N_UNITS, N_UNITS), numpy.float32)
    check(f"ws[2][0].shape == {(N_UNITS, 2 * N_UNITS)}", *bi[:2], bad_ws, *bi[3:], n_step_bilstm)
