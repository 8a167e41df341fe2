"""Importer of LSTM (forward, reverse or bidirectional; peepholes; layout 0 or 1), unrolled
over time with dbr functions, so that every weight trains."""

import dbr.functions as F
from dbr.onnx.importers._util import importer, ints

IMPORTERS = {}

_DEFAULT_ACTIVATIONS = ["Sigmoid", "Tanh", "Tanh"]


def _check(params, sequence_lens, steps):
    activations = params.get("activations")
    if activations is not None:
        activations = [a.decode() if isinstance(a, bytes) else a for a in activations]
        if activations != _DEFAULT_ACTIVATIONS * (len(activations) // 3):
            raise params.error(f"activations={activations} are not supported (only the defaults)")
    if params.get("clip") is not None:
        raise params.error("clip is not supported")
    if params.get("input_forget", 0):
        raise params.error("input_forget=1 is not supported")
    if sequence_lens is not None and any(n != steps for n in ints(sequence_lens)):
        raise params.error(
            f"sequences of different lengths are not supported (sequence_lens="
            f"{ints(sequence_lens)}, {steps} steps)"
        )


def _run_direction(xs, w, r, b, h, c, p, reverse):
    """One direction over the steps ``xs`` (a list of (batch, input)); returns hs, h, c."""
    steps = list(reversed(xs)) if reverse else xs
    hs = []
    for x in steps:
        gates = F.linear(x, w, b)
        if h is not None:
            gates = gates + F.linear(h, r)
        gi, go, gf, gc = F.split_axis(gates, 4, axis=1)
        if p is not None and c is not None:
            gi = gi + c * p[0]
            gf = gf + c * p[2]
        i, f, candidate = F.sigmoid(gi), F.sigmoid(gf), F.tanh(gc)
        c = i * candidate if c is None else f * c + i * candidate
        if p is not None:
            go = go + c * p[1]
        h = F.sigmoid(go) * F.tanh(c)
        hs.append(h)
    return (list(reversed(hs)) if reverse else hs), h, c


@importer(IMPORTERS, "LSTM", static=(4,))
def _lstm(params, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None):
    layout = params.get("layout", 0)
    if layout:
        x = F.swapaxes(x, 0, 1)
    steps = x.shape[0]
    _check(params, sequence_lens, steps)
    hidden = params.get("hidden_size", r.shape[-1])
    direction = params.get("direction", "forward")
    xs = F.separate(x, axis=0) if steps > 1 else (F.reshape(x, x.shape[1:]),)
    outputs, last_h, last_c = [], [], []
    for d in range(w.shape[0]):
        bias = None if b is None else b[d, : 4 * hidden] + b[d, 4 * hidden :]
        h = None if initial_h is None else initial_h[d]
        c = None if initial_c is None else initial_c[d]
        peepholes = None if p is None else F.split_axis(p[d], 3, axis=0)
        reverse = direction == "reverse" or d == 1
        hs, h, c = _run_direction(xs, w[d], r[d], bias, h, c, peepholes, reverse)
        outputs.append(F.stack(hs, axis=0))
        last_h.append(h)
        last_c.append(c)
    y = F.stack(outputs, axis=1)  # (steps, directions, batch, hidden)
    y_h, y_c = F.stack(last_h, axis=0), F.stack(last_c, axis=0)
    if layout:
        y = F.transpose(y, (2, 0, 1, 3))
        y_h, y_c = F.swapaxes(y_h, 0, 1), F.swapaxes(y_c, 0, 1)
    return (y, y_h, y_c)[: max(params.n_outputs, 1)]
