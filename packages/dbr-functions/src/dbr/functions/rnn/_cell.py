"""The cell shared by lstm, slstm, tree_lstm and n_step_lstm.

From pre-activations ``A_1, I_1 .. A_m, I_m, O, F_1 .. F_n`` laid out along the
second axis of one array ``P`` and cell states ``c_1 .. c_n`` it computes

    c = sum_j tanh(A_j) sigmoid(I_j) + sum_k sigmoid(F_k) c_k,     h = sigmoid(O) tanh(c).

Every function but slstm has one pair ``A, I`` (``m == 1``); slstm has one per child.

The functions differ only in where the gates lie in ``P`` (a
:class:`GateLayout`) and in how ``P`` is made from their inputs. With one cell
(lstm), ``c_1`` may have more rows than ``P``: the extra rows are copied to
``c`` unchanged, which is how sequences that have ended keep their state.
"""

import numpy

from dbr.core import FunctionNode, Variable, backend, ops
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.activation.sigmoid import sigmoid
from dbr.functions.activation.tanh import tanh
from dbr.functions.array.concat import concat
from dbr.functions.array.stack import stack

_new_variable = Variable.from_array

# The one-cell, four-gate cell on the GPU. Element i of c (B, N, R) reads gate k of
# P (B, 4N, R, C-contiguous) at base + k * ks, with js and ks the strides of a unit
# and a gate in P (interleaved: 4R and R; blocked: R and NR).
_GATES = """
typedef dbr_acc<T>::type A;
const int b = i / nr;
const int jr = i - b * nr;
const int j = jr / rs;
const ptrdiff_t base = (ptrdiff_t)b * 4 * nr + (ptrdiff_t)j * js + (jr - j * rs);
const A half = 0.5;
const A a = tanh((A)p[base + ga * ks]);
const A ig = tanh((A)p[base + gi * ks] * half) * half + half;
const A fg = tanh((A)p[base + gf * ks] * half) * half + half;
const A og = tanh((A)p[base + go * ks] * half) * half + half;
"""
_LAYOUT_PARAMS = "int32 nr, int32 rs, int32 js, int32 ks, int32 ga, int32 gi, int32 gf, int32 go"
_LSTM_ELEMENTWISE = {
    "in_params": "T c_prev, raw T p, " + _LAYOUT_PARAMS,
    "out_params": "T c, T h",
    "operation": _GATES
    + """
const T ct = (T)(a * ig + fg * (A)c_prev);
c = ct;
h = (T)(og * tanh((A)ct));
""",
    "name": "dbr_lstm",
    "preamble": ACC_PREAMBLE,
}
_LSTM_GRAD_ELEMENTWISE = {
    "in_params": "T c_prev, T c, T gc, T gh, raw T p, " + _LAYOUT_PARAMS,
    "out_params": "T gc_prev, raw T gp",
    "operation": _GATES
    + """
const A tc = tanh((A)c);
const A gct = (A)gh * og * ((A)1 - tc * tc) + (A)gc;
gp[base + ga * ks] = (T)(gct * ig * ((A)1 - a * a));
gp[base + gi * ks] = (T)(gct * a * ig * ((A)1 - ig));
gp[base + gf * ks] = (T)(gct * (A)c_prev * fg * ((A)1 - fg));
gp[base + go * ks] = (T)((A)gh * tc * og * ((A)1 - og));
gc_prev = (T)(gct * fg);
""",
    "name": "dbr_lstm_grad",
    "preamble": ACC_PREAMBLE,
}


class GateLayout:
    """Where the ``G = 2m + 1 + n`` gates of a cell lie along the second axis of ``P``.

    ``P`` has shape ``(B, G * N, ...)``. Interleaved, unit ``j`` of the gate at
    position ``k`` is column ``j * G + k``; blocked, it is column ``k * N + j``.

    Args:
        interleaved (bool): the layout.
        a, i (int or tuple of int): positions of the cell-input gates and of
            their input gates, ``m`` of each (one int for ``m == 1``).
        o (int): position of the output gate.
        f (tuple of int): positions of the forget gates, one per cell.
    """

    def __init__(self, interleaved, a, i, o, f):
        self.a = (a,) if isinstance(a, int) else tuple(a)
        self.i = (i,) if isinstance(i, int) else tuple(i)
        self.o = o
        self.f = tuple(f)
        self.n_gates = len(self.a) + len(self.i) + 1 + len(self.f)
        self.interleaved = interleaved
        positions = self.a + self.i + (o,) + self.f
        if len(self.a) != len(self.i) or sorted(positions) != list(range(self.n_gates)):
            raise ValueError(f"GateLayout: invalid gate positions {(self.a, self.i, o, self.f)}")

    def grouped_shape(self, shape):
        """The shape of ``P`` with its gate axis made explicit."""
        g = self.n_gates
        n = shape[1] // g
        if self.interleaved:
            return (shape[0], n, g) + tuple(shape[2:])
        return (shape[0], g, n) + tuple(shape[2:])

    def _index(self, k):
        return (slice(None), slice(None), k) if self.interleaved else (slice(None), k)

    def gate(self, grouped, k):
        """The view of gate position ``k`` of a grouped array."""
        return grouped[self._index(k)]

    def activate(self, p):
        """Return ``P`` grouped, with ``tanh`` applied to the ``A_j`` and sigmoid to the others."""
        xp = backend.get_array_module(p)
        act = xp.empty(self.grouped_shape(p.shape), p.dtype)
        act[...] = p.reshape(act.shape)
        self.activate_inplace(act)
        return act

    def activate_inplace(self, grouped):
        """Apply ``tanh`` to the ``A_j`` and sigmoid to the other gates of grouped ``P`` in place.

        ``grouped`` must be C-contiguous: the sigmoid runs over all of it at once
        (contiguous passes are much faster than strided ones), then the ``A_j`` are restored.
        """
        xp = backend.get_array_module(grouped)
        half = grouped.dtype.type(0.5)
        tanh_as = [xp.tanh(self.gate(grouped, k)) for k in self.a]
        # sigmoid(x) == tanh(x / 2) / 2 + 1/2: one transcendental pass, no overflow
        grouped *= half
        xp.tanh(grouped, out=grouped)
        grouped *= half
        grouped += half
        for k, tanh_a in zip(self.a, tanh_as):
            self.gate(grouped, k)[...] = tanh_a

    def split_variable(self, p):
        """The gates of a Variable ``P`` as Variables, by position."""
        pg = ops.reshape(p, self.grouped_shape(p.shape))
        return [ops.get_item(pg, self._index(k)) for k in range(self.n_gates)]

    def merge_variable(self, parts, shape):
        """The Variable of ``shape`` whose gates are ``parts`` (by position)."""
        return ops.reshape(stack(parts, axis=2 if self.interleaved else 1), shape)

    def kernel_args(self, c_shape):
        """The layout arguments of the GPU kernels (one pair ``A, I``) for cells of ``c_shape``."""
        units = c_shape[1]
        rest = 1
        for d in c_shape[2:]:
            rest *= d
        nr = units * rest
        js, ks = (4 * rest, rest) if self.interleaved else (rest, nr)
        return (nr, rest, js, ks, self.a[0], self.i[0], self.f[0], self.o)


def _gpu_cell(layout, cs):
    """Whether the one-cell GPU kernels compute this cell."""
    return len(cs) == 1 and layout.n_gates == 4 and type(cs[0]) is not numpy.ndarray


def _cell_forward_gpu(layout, p, c_prev):
    """The cell by one kernel: return ``(c, h)``."""
    xp = backend.get_array_module(p)
    batch = p.shape[0]
    c = xp.empty(c_prev.shape, p.dtype)
    h = xp.empty((batch,) + c_prev.shape[1:], p.dtype)
    p = xp.ascontiguousarray(p)
    args = layout.kernel_args(c_prev.shape)
    kernel(_LSTM_ELEMENTWISE)(c_prev[:batch], p, *args, c[:batch], h)
    if len(c_prev) > batch:
        c[batch:] = c_prev[batch:]
    return c, h


def _cell_grad_gpu(layout, p, c_prev, c, gc, gh):
    """The gradients ``(gc_prev, gP)`` of the cell by one kernel."""
    xp = backend.get_array_module(p)
    batch = p.shape[0]
    p = xp.ascontiguousarray(p)
    gp = xp.empty(p.shape, p.dtype)
    gc_prev = xp.empty(c_prev.shape, p.dtype)
    args = layout.kernel_args(c_prev.shape)
    kernel(_LSTM_GRAD_ELEMENTWISE)(
        c_prev[:batch], c[:batch], gc[:batch], gh, p, *args, gc_prev[:batch], gp
    )
    if len(c_prev) > batch:
        gc_prev[batch:] = gc[batch:]
    return gc_prev, gp


def cell_forward(layout, p, cs):
    """The cell on arrays: return ``(c, h, act, tanh_c)``.

    ``act`` is ``P`` grouped and activated and ``tanh_c`` is ``tanh(c[:B])``;
    both are kept for the backward pass.
    """
    xp = backend.get_array_module(p)
    act = layout.activate(p)
    batch = p.shape[0]
    c_first = cs[0]
    c = xp.empty(c_first.shape, p.dtype)
    head = c[:batch]
    xp.multiply(layout.gate(act, layout.a[0]), layout.gate(act, layout.i[0]), out=head)
    for ka, ki in zip(layout.a[1:], layout.i[1:]):
        head += layout.gate(act, ka) * layout.gate(act, ki)
    if len(cs) == 1:
        f = layout.gate(act, layout.f[0])
        head += f * c_first if len(c_first) == batch else f * c_first[:batch]
        if len(c_first) > batch:
            c[batch:] = c_first[batch:]
    else:
        for k, ck in zip(layout.f, cs):
            head += layout.gate(act, k) * ck
    tanh_c = xp.tanh(head)
    h = layout.gate(act, layout.o) * tanh_c
    return c, h, act, tanh_c


class CellFunction(FunctionNode):
    """Base of the cell FunctionNodes: inputs ``(c_1 .. c_n, *x)``, outputs ``(c, h)``.

    A subclass sets ``layout`` (or ``self.layout``) and ``n_cells``; when its
    ``x`` inputs are not ``P`` itself it overrides :meth:`pre_activations`,
    :meth:`pre_activations_variable` and :meth:`x_grads`.
    """

    layout = None
    n_cells = 1

    def pre_activations(self, xs):
        """``P`` from the ``x`` input arrays."""
        return xs[0]

    def pre_activations_variable(self, xs):
        """``P`` from the ``x`` input Variables, as a Variable."""
        return xs[0]

    def x_grads(self, gp, xs):
        """The gradients of the ``x`` inputs from that of ``P``."""
        return (gp,)

    def forward(self, inputs):
        n = self.n_cells
        self.retain_inputs(tuple(range(len(inputs))))
        self.retain_outputs((0,))
        if _gpu_cell(self.layout, inputs[:n]):
            self._act = self._tanh_c = None
            return _cell_forward_gpu(self.layout, self.pre_activations(inputs[n:]), inputs[0])
        c, h, self._act, self._tanh_c = cell_forward(
            self.layout, self.pre_activations(inputs[n:]), inputs[:n]
        )
        return c, h

    def backward(self, indexes, grad_outputs):
        n = self.n_cells
        inputs = self.get_retained_inputs()
        cs, xs = inputs[:n], inputs[n:]
        c = self.get_retained_outputs()[0]
        gc, gh = grad_outputs
        p = self.pre_activations_variable(xs)
        if gc is None:
            gc = _new_variable(c.xp.zeros(c.shape, c.dtype), False)
        if gh is None:
            shape = (p.shape[0],) + c.shape[1:]
            gh = _new_variable(c.xp.zeros(shape, c.dtype), False)
        grads = CellGrad(self.layout, self._act, self._tanh_c).apply((*cs, p, c, gc, gh))
        if indexes[-1] < n:
            return grads[:n] + (None,) * len(xs)
        return grads[:n] + tuple(self.x_grads(grads[n], xs))


class CellGrad(FunctionNode):
    """The gradients ``(gc_1 .. gc_n, gP)`` of the cell from ``(c_1 .. c_n, P, c, gc, gh)``.

    Args:
        layout (GateLayout): the layout of ``P``.
        act: ``P`` grouped and activated, if the forward pass kept it (else None).
        tanh_c: ``tanh(c[:B])``, likewise.
    """

    def __init__(self, layout, act=None, tanh_c=None):
        self.layout = layout
        self._act = act
        self._tanh_c = tanh_c

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        layout = self.layout
        cs = inputs[:-4]
        p, c, gc, gh = inputs[-4:]
        if _gpu_cell(layout, cs):
            self._act = self._tanh_c = None
            return _cell_grad_gpu(layout, p, cs[0], c, gc, gh)
        xp = backend.get_array_module(p)
        batch = p.shape[0]
        act = self._act if self._act is not None else layout.activate(p)
        tanh_c = self._tanh_c if self._tanh_c is not None else xp.tanh(c[:batch])
        self._act = self._tanh_c = None
        one = p.dtype.type(1)
        o = layout.gate(act, layout.o)

        # gc_total = gc + gh * o * (1 - tanh(c) ** 2): the gradient reaching c
        gct = tanh_c * tanh_c
        xp.subtract(one, gct, out=gct)
        gct *= o
        gct *= gh
        gct += gc[:batch]

        gpg = xp.empty(act.shape, p.dtype)
        for ka, ki in zip(layout.a, layout.i):
            a = layout.gate(act, ka)
            i = layout.gate(act, ki)
            g = layout.gate(gpg, ka)
            xp.multiply(a, a, out=g)
            xp.subtract(one, g, out=g)
            g *= i
            g *= gct
            g = layout.gate(gpg, ki)
            xp.subtract(one, i, out=g)
            g *= i
            g *= a
            g *= gct
        g = layout.gate(gpg, layout.o)
        xp.subtract(one, o, out=g)
        g *= o
        g *= tanh_c
        g *= gh
        gcs = []
        for k, ck in zip(layout.f, cs):
            f = layout.gate(act, k)
            g = layout.gate(gpg, k)
            xp.subtract(one, f, out=g)
            g *= f
            g *= ck[:batch]
            g *= gct
            if len(ck) == batch:
                gcs.append(gct * f)
            else:
                gck = xp.empty(ck.shape, p.dtype)
                xp.multiply(gct, f, out=gck[:batch])
                gck[batch:] = gc[batch:]
                gcs.append(gck)
        return (*gcs, gpg.reshape(p.shape))

    def backward(self, indexes, grad_outputs):
        # The gradients of L = sum_k <ggc_k, gc_k> + <ggP, gP> with respect to every input,
        # written with differentiable functions so that any order works. c is an input of
        # its own here: what flows into it reaches c_k and P through the cell's backward.
        layout = self.layout
        inputs = self.get_retained_inputs()
        n = len(inputs) - 4
        cs = inputs[:n]
        p, c, gc, gh = inputs[n:]
        ggcs, ggp = grad_outputs[:n], grad_outputs[n]
        batch = p.shape[0]
        extra = c.shape[0] - batch

        def head(v):
            return ops.get_item(v, slice(None, batch)) if extra and v is not None else v

        pre = layout.split_variable(p)
        as_ = [tanh(pre[k]) for k in layout.a]
        is_ = [sigmoid(pre[k]) for k in layout.i]
        o = sigmoid(pre[layout.o])
        fs = [sigmoid(pre[k]) for k in layout.f]
        tc = tanh(head(c))
        dtc = 1.0 - tc * tc
        das = [1.0 - a * a for a in as_]
        dis = [i * (1.0 - i) for i in is_]
        do = o * (1.0 - o)
        dfs = [f * (1.0 - f) for f in fs]
        gct = gh * o * dtc + head(gc)
        csb = [head(ck) for ck in cs]
        ggcsb = [head(g) for g in ggcs]
        pairs = range(len(layout.a))
        if ggp is None:
            ggo = None
            ggas = ggis = [None] * len(pairs)
            ggfs = [None] * n
        else:
            gg = layout.split_variable(ggp)
            ggas = [gg[k] for k in layout.a]
            ggis = [gg[k] for k in layout.i]
            ggo = gg[layout.o]
            ggfs = [gg[k] for k in layout.f]

        # s = dL/d(gc_total)
        s = _sum(
            [_mul(ggas[j], is_[j], das[j]) for j in pairs]
            + [_mul(ggis[j], as_[j], dis[j]) for j in pairs]
            + [_mul(ggf, ck, df) for ggf, ck, df in zip(ggfs, csb, dfs)]
            + [_mul(g, f) for g, f in zip(ggcsb, fs)]
        )
        ret = []
        for index in indexes:
            if index < n:
                ret.append(_pad(_mul(ggfs[index], gct, dfs[index]), extra))
            elif index == n:
                parts = [None] * layout.n_gates
                for j, (ka, ki) in enumerate(zip(layout.a, layout.i)):
                    a, i, da, di, gga, ggi = as_[j], is_[j], das[j], dis[j], ggas[j], ggis[j]
                    parts[ka] = _mul(_sum([_mul(ggi, 1.0 - i), _mul(gga, a, -2.0)]), gct, da, i)
                    parts[ki] = _mul(_sum([_mul(gga, da), _mul(ggi, a, 1.0 - 2.0 * i)]), gct, di)
                parts[layout.o] = _mul(_sum([_mul(s, dtc), _mul(ggo, tc, 1.0 - 2.0 * o)]), gh, do)
                for k, position in enumerate(layout.f):
                    inner = _sum([_mul(ggfs[k], csb[k], 1.0 - 2.0 * fs[k]), ggcsb[k]])
                    parts[position] = _mul(inner, gct, dfs[k])
                ret.append(_merge(layout, parts, as_[0], p.shape))
            elif index == n + 1:
                g = _sum([_mul(s, gh, o, tc, -2.0), _mul(ggo, gh, do)])
                ret.append(_pad(_mul(g, dtc), extra))
            elif index == n + 2:
                if extra:
                    tail = ggcs[0]
                    if tail is not None:
                        tail = ops.get_item(tail, slice(batch, None))
                    if s is None and tail is None:
                        ret.append(None)
                        continue
                    ret.append(concat((_or_zeros(s, tc), _or_zeros(tail, c, extra)), axis=0))
                else:
                    ret.append(s)
            else:
                ret.append(_sum([_mul(s, o, dtc), _mul(ggo, tc, do)]))
        return tuple(ret)


def _sum(terms):
    """The sum of the terms that are not None (None if all are)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def _mul(first, *factors):
    """``first * factors[0] * ...``, or None when ``first`` is None."""
    if first is None:
        return None
    for f in factors:
        first = first * f
    return first


def _or_zeros(v, like, rows=None):
    """``v``, or a constant Variable of zeros shaped like ``like`` (with ``rows`` rows)."""
    if v is not None:
        return v
    shape = like.shape if rows is None else (rows,) + like.shape[1:]
    return _new_variable(like.xp.zeros(shape, like.dtype), False)


def _merge(layout, parts, like, shape):
    """The gradient of ``P`` from those of its gates (None for zero; None if all are)."""
    if all(q is None for q in parts):
        return None
    zeros = None
    for k, q in enumerate(parts):
        if q is None:
            if zeros is None:
                zeros = _or_zeros(None, like)
            parts[k] = zeros
    return layout.merge_variable(parts, shape)


def _pad(g, extra):
    """``g`` followed by ``extra`` rows of zeros (None stays None)."""
    if g is None or not extra:
        return g
    return concat((g, _or_zeros(None, g, extra)), axis=0)
