"""The machinery shared by n_step_rnn, n_step_lstm and n_step_gru and their bi-directional forms.

Each layer (and direction) is one :class:`RecurrentLayer` node. Its forward
first projects the inputs of every time step at once, with one product over
the sequence concatenated along the batch axis, then loops over time with only
the recurrent product and the cell, on arrays; its backward is a fused
backpropagation through time that takes the weights' gradients with one
product each over every step.

When the backward pass is itself recorded (``enable_double_backprop``), the
layer is instead recomputed step by step with differentiable functions and its
gradients are taken through that graph, so that they can be differentiated
again. Both give the same values.

Sequences are sorted by decreasing length, so the ones running at a step are
the leading rows of the batch; the other rows keep their state.
"""

import numbers

import numpy

from dbr.core import FunctionNode, Variable, backend, grad
from dbr.functions import _tuning
from dbr.functions._invalid_type import invalid_type
from dbr.functions.array.concat import concat
from dbr.functions.array.separate import separate
from dbr.functions.array.split_axis import split_axis
from dbr.functions.array.stack import stack
from dbr.functions.connection.linear import linear, matmul_as
from dbr.functions.noise.dropout import dropout

_new_variable = Variable.from_array
_float16 = numpy.dtype(numpy.float16)


def _array(x):
    return x.array if isinstance(x, Variable) else x


def _checked_array(who, name, x):
    """The array of ``x``, or a TypeError naming ``who`` and ``name`` when it is none."""
    x = _array(x)
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        raise TypeError(
            f"{who}: expected {name} to be a Variable or an array, got {type(x).__name__}"
        )
    return x


def check_kwargs(who, kwargs):
    """Reject Chainer's removed ``train``/``use_cudnn`` arguments and unknown ones."""
    for name in ("train", "use_cudnn"):
        if name in kwargs:
            raise ValueError(
                f"{who}: the {name} argument is not supported anymore; use "
                f"dbr.core.using_config({name!r}, ...) instead"
            )
    if kwargs:
        raise TypeError(f"{who}: got an unexpected keyword argument {next(iter(kwargs))!r}")


def check_inputs(who, n_layers, dropout_ratio, hx, cx, ws, bs, xs, n_weights, directions):
    """Check every argument of an n-step function before anything is computed.

    Raises:
        TypeError, ValueError: for ``n_layers``, ``dropout_ratio`` and the
            structure of ``ws``, ``bs`` and ``xs``.
        InvalidType: for a wrong ndim, dtype or shape of an array.
    """
    if isinstance(n_layers, bool) or not isinstance(n_layers, numbers.Integral):
        raise TypeError(f"{who}: expected n_layers to be an int, got {n_layers!r}")
    if n_layers < 1:
        raise ValueError(f"{who}: expected n_layers >= 1, got {n_layers}")
    if isinstance(dropout_ratio, bool) or not isinstance(dropout_ratio, numbers.Real):
        raise TypeError(f"{who}: expected dropout_ratio to be a float, got {dropout_ratio!r}")
    if not 0 <= dropout_ratio < 1:
        raise ValueError(f"{who}: expected dropout_ratio in [0, 1), got {dropout_ratio!r}")
    n_rnn = n_layers * directions
    for name, params in (("ws", ws), ("bs", bs)):
        if not isinstance(params, (list, tuple)) or len(params) != n_rnn:
            got = len(params) if isinstance(params, (list, tuple)) else type(params).__name__
            raise ValueError(
                f"{who}: expected {name} to hold {n_rnn} lists (n_layers * {directions}), "
                f"got {got}"
            )
        for k, group in enumerate(params):
            if not isinstance(group, (list, tuple)) or len(group) != n_weights:
                got = len(group) if isinstance(group, (list, tuple)) else type(group).__name__
                raise ValueError(
                    f"{who}: expected {name}[{k}] to hold {n_weights} arrays, got {got}"
                )
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{who}: expected xs to be a non-empty list of Variables or arrays")

    h = _checked_array(who, "hx", hx)
    if h.dtype.kind != "f":
        raise invalid_type(who, "hx.dtype.kind == 'f'", f"hx.dtype == {h.dtype}")
    if h.ndim != 3 or h.shape[0] != n_rnn:
        raise invalid_type(who, f"hx.shape == ({n_rnn}, B, N)", f"hx.shape == {h.shape}")
    dtype = h.dtype
    n_units = h.shape[2]
    if cx is not None:
        c = _checked_array(who, "cx", cx)
        if c.dtype != dtype:
            raise invalid_type(who, "cx.dtype == hx.dtype", f"{c.dtype} != {dtype}")
        if c.shape != h.shape:
            raise invalid_type(who, "cx.shape == hx.shape", f"{c.shape} != {h.shape}")

    previous = h.shape[1]
    n_in = None
    for t, x in enumerate(xs):
        name = f"xs[{t}]"
        x = _checked_array(who, name, x)
        if x.dtype != dtype:
            raise invalid_type(who, f"{name}.dtype == hx.dtype", f"{x.dtype} != {dtype}")
        if x.ndim != 2 or (n_in is not None and x.shape[1] != n_in):
            expect = f"{name}.ndim == 2" if n_in is None else f"{name}.shape == (B_{t}, {n_in})"
            raise invalid_type(who, expect, f"{name}.shape == {x.shape}")
        n_in = x.shape[1]
        if x.shape[0] > previous:
            expect = (
                "xs[0].shape[0] <= hx.shape[1]"
                if t == 0
                else f"{name}.shape[0] <= xs[{t - 1}].shape[0] (sorted by decreasing length)"
            )
            raise invalid_type(who, expect, f"{x.shape[0]} > {previous}")
        previous = x.shape[0]

    half = n_weights // 2
    for k in range(n_rnn):
        for j in range(n_weights):
            name = f"ws[{k}][{j}]"
            w = _checked_array(who, name, ws[k][j])
            if j >= half:
                width = n_units
            elif k < directions:
                width = n_in
            else:
                width = n_units * directions
            if w.dtype != dtype:
                raise invalid_type(who, f"{name}.dtype == hx.dtype", f"{w.dtype} != {dtype}")
            if w.shape != (n_units, width):
                raise invalid_type(
                    who, f"{name}.shape == {(n_units, width)}", f"{name}.shape == {w.shape}"
                )
            name = f"bs[{k}][{j}]"
            b = _checked_array(who, name, bs[k][j])
            if b.dtype != dtype:
                raise invalid_type(who, f"{name}.dtype == hx.dtype", f"{b.dtype} != {dtype}")
            if b.shape != (n_units,):
                raise invalid_type(
                    who, f"{name}.shape == ({n_units},)", f"{name}.shape == {b.shape}"
                )


class RecurrentLayer(FunctionNode):
    """One direction of one layer over every time step.

    Inputs are ``(x, W_x, b_x, h0, *rest)``: ``x`` the inputs of all steps,
    concatenated along the batch axis (``sum_t B_t`` rows), which the layer
    projects to ``P = x W_x^T + b_x`` with one product; ``h0`` the initial
    hidden state of all ``B`` rows, then the initial cell state if any and the
    recurrent weights. Outputs are ``(H, h_last, *c_last)``: the hidden states
    of all steps, concatenated like ``x``, and the final states of all rows.

    ``P`` is as large as the gates and only a recorded backward (which
    recomputes it) would need it again, so the layer keeps its inputs but not
    ``P``; the gradients of ``x``, ``W_x`` and ``b_x`` come from ``P``'s.

    A subclass implements ``forward_loop(inputs)`` (arrays ``(P, h0, *rest)``;
    it may keep what its backward needs when ``config.enable_backprop``),
    ``backward_loop(inputs, grads, indexes)`` (arrays ``(None, h0, *rest)``,
    ``grads`` with None for absent output gradients; ``indexes`` count ``P``
    as 0 and always include it) and ``step(p_t, h, c, params)`` (Variables;
    one time step, returning ``(h, c)``) which defines the layer step by step.

    Args:
        batches (list of int): ``B_t`` for each step.
        reverse (bool): run from the last step to the first.
    """

    def __init__(self, batches, reverse):
        self.batches = batches
        self.offsets = numpy.concatenate(([0], numpy.cumsum(batches)[:-1])).tolist()
        n = len(batches)
        self.order = range(n - 1, -1, -1) if reverse else range(n)

    def steps(self):
        """``(batch, rows)`` of each step in the order the recurrence runs."""
        return [
            (self.batches[t], slice(self.offsets[t], self.offsets[t] + self.batches[t]))
            for t in self.order
        ]

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        x, w_x, b_x = inputs[:3]
        p = matmul_as(x, w_x.T, x.dtype)
        p += b_x
        return self.forward_loop((p,) + tuple(inputs[3:]))

    def backward(self, indexes, grad_outputs):
        inputs = self.get_retained_inputs()
        if self.backward_is_recorded():
            return self._backward_step_by_step(inputs, indexes, grad_outputs)
        arrays = [v.array for v in inputs]
        grads = self.backward_loop(
            [None] + arrays[3:],
            [None if g is None else g.array for g in grad_outputs],
            (0,) + tuple([i - 2 for i in indexes if i >= 3]),
        )
        gp = grads[0]
        x, w_x = arrays[0], arrays[1]
        rest = iter(grads[1:])
        ret = []
        for i in indexes:
            if i == 0:
                g = matmul_as(gp, w_x, x.dtype)
            elif i == 1:
                g = matmul_as(gp.T, x, w_x.dtype)
            elif i == 2:
                g = gp.sum(axis=0)
            else:
                g = next(rest)
            ret.append(None if g is None else _new_variable(g, False))
        return tuple(ret)

    def _backward_step_by_step(self, inputs, indexes, grad_outputs):
        outputs = self.step_by_step(inputs)
        pairs = [(y, g) for y, g in zip(outputs, grad_outputs) if g is not None]
        return tuple(
            grad(
                [y for y, _ in pairs],
                [inputs[i] for i in indexes],
                [g for _, g in pairs],
                enable_double_backprop=True,
            )
        )

    def step_by_step(self, inputs):
        """The layer as a graph of differentiable functions: ``(H, h_last, *c_last)``."""
        p = linear(*inputs[:3])
        h0 = inputs[3]
        has_cell = self.has_cell
        c = inputs[4] if has_cell else None
        params = inputs[5:] if has_cell else inputs[4:]
        batches = self.batches
        ps = split_axis(p, self.offsets[1:], axis=0) if len(batches) > 1 else (p,)
        rows = _Rows(h0)
        hs = [None] * len(batches)
        for t in self.order:
            h, c = self.step(ps[t], rows.take(batches[t]), c, params)
            rows.head = h
            hs[t] = h
        h_all = concat(hs, axis=0) if len(hs) > 1 else hs[0]
        if has_cell:
            return h_all, rows.final(), c
        return h_all, rows.final()


class _Rows:
    """A hidden state of which the leading rows take part in each step.

    It is kept as the rows that took part in the last step (``head``) and the
    others, in order, so that a step only splits or joins the rows that start
    or stop taking part.
    """

    def __init__(self, h):
        self.head = h
        self.rest = []

    def take(self, batch):
        """Return the state of the first ``batch`` rows."""
        have = self.head.shape[0]
        if batch < have:
            self.head, tail = split_axis(self.head, [batch], axis=0)
            self.rest.insert(0, tail)
        elif batch > have:
            parts = [self.head]
            need = batch - have
            while need:
                piece = self.rest.pop(0)
                if piece.shape[0] > need:
                    piece, tail = split_axis(piece, [need], axis=0)
                    self.rest.insert(0, tail)
                parts.append(piece)
                need -= piece.shape[0]
            self.head = concat(parts, axis=0)
        return self.head

    def final(self):
        """The state of every row."""
        return concat([self.head] + self.rest, axis=0) if self.rest else self.head


def n_step(n_layers, dropout_ratio, hx, cx, ws, bs, xs, directions, run_layer):
    """Run the stacked (bi-)directional RNN.

    ``run_layer(x, h0, c0, w, b, batches, reverse)`` runs one direction of one
    layer on the inputs ``x`` of every step (concatenated along the batch axis)
    and returns the outputs of its :class:`RecurrentLayer`.

    Returns:
        tuple: ``(hy, cy, ys)``; ``cy`` is None when ``cx`` is.
    """
    batches = [_array(x).shape[0] for x in xs]
    hxs = separate(hx, 0)
    cxs = separate(cx, 0) if cx is not None else [None] * len(hxs)
    x = concat(xs, axis=0) if len(xs) > 1 else xs[0]
    hy = []
    cy = []
    for layer in range(n_layers):
        hs = []
        for direction in range(directions):
            k = layer * directions + direction
            # Chainer draws dropout masks even at ratio 0: numpy.random stays in step with it.
            x_in = x if layer == 0 else dropout(x, dropout_ratio)
            outputs = run_layer(x_in, hxs[k], cxs[k], ws[k], bs[k], batches, direction == 1)
            hs.append(outputs[0])
            hy.append(outputs[1])
            if cx is not None:
                cy.append(outputs[2])
        x = hs[0] if directions == 1 else concat(hs, axis=1)
    ys = split_axis(x, numpy.cumsum(batches[:-1]).tolist(), axis=0) if len(xs) > 1 else (x,)
    return stack(hy), (stack(cy) if cx is not None else None), ys


def gemm_operand(w):
    """``w`` ready for the products of every step: float16 is cast to float32 once.

    :func:`~dbr.functions.connection.linear.matmul_as` multiplies float16 in
    float32; casting the small per-step operand only is cheaper than the weight.
    """
    return w.astype(numpy.float32) if w.dtype == _float16 else w


_float32 = numpy.dtype(numpy.float32)


def _block(rows, depth, fixed):
    """The widest step-product block that keeps ``rows * block * depth`` small, or None.

    The blocks and the bound are :data:`~dbr.functions._tuning.STEP_PRODUCT_BLOCKS`
    and :data:`~dbr.functions._tuning.SMALL_PRODUCT_MAX`.
    """
    for block in _tuning.STEP_PRODUCT_BLOCKS:
        if rows * block * depth <= _tuning.SMALL_PRODUCT_MAX and block < fixed:
            return block
    return None


class StepProducts:
    """The recurrent products of every step with one weight ``W`` of shape ``(G, N)``.

    ``forward(h, p, out)`` writes ``p + h W^T`` (``h`` of shape ``(b, N)``,
    ``p`` and ``out`` of shape ``(b, G)``) into ``out``; ``backward(g, dtype)``
    returns ``g W`` (``g`` of shape ``(b, G)``). ``batch`` is the largest
    ``b``. On NumPy float32 with OpenBLAS's small-matrix kernels they run as
    products of column (row) blocks of ``W`` small enough for those kernels;
    otherwise as one product each (float16 multiplied in float32, as
    :func:`matmul_as`). The two ways differ only by float rounding.
    """

    def __init__(self, w, batch):
        blocked = _tuning.SMALL_MATRIX_KERNELS and type(w) is numpy.ndarray and w.dtype == _float32
        self.w = w = gemm_operand(w)
        g, n = w.shape
        # Both products multiply b x block x N: h by a block of W^T's columns, g's
        # columns by a block of W's rows.
        self.block = _block(batch, n, g) if blocked else None
        self.w_t = None

    def forward(self, h, p, out):
        """``out[...] = p + h W^T``, for ``p`` and ``out`` of shape ``(b, G)``."""
        step = self.block
        if step is None:
            # (W h^T)^T: one product is faster this way round for a small batch.
            xp = numpy if type(p) is numpy.ndarray else backend.get_array_module(p)
            xp.add(p, matmul_as(self.w, h.T, out.dtype).T, out=out)
            return
        w_t = self.w_t
        if w_t is None:
            # Column blocks of W^T, read in place: one transposed copy per layer.
            w_t = self.w_t = numpy.ascontiguousarray(self.w.T)
        for lo in range(0, w_t.shape[1], step):
            numpy.matmul(h, w_t[:, lo : lo + step], out=out[:, lo : lo + step])
        out += p

    def backward(self, g, dtype):
        """``g W`` as a new array of ``dtype``."""
        step = self.block
        w = self.w
        if step is None:
            return matmul_as(g, w, dtype)
        total = g[:, :step] @ w[:step]
        for lo in range(step, w.shape[0], step):
            total += g[:, lo : lo + step] @ w[lo : lo + step]
        return total


def zeros_or_copy(xp, g, shape, dtype):
    """A fresh array: a copy of ``g``, or zeros when ``g`` is None."""
    return xp.zeros(shape, dtype) if g is None else g.copy()
