"""connectionist_temporal_classification: the CTC loss, computed in log space.

The forward pass runs the forward (alpha) recursion of Graves et al. over
the extended label sequence (labels interleaved with blanks). Backward runs
the backward (beta) recursion and gives each input its gradient
``softmax(x) - posterior`` in one node. The second-order gradient is exact
too: it is the forward-mode derivative of both recursions along the
incoming direction (the Hessian is symmetric). Third-order gradients are
not supported.
"""

import numbers

import numpy

from dbr.core import FunctionNode, Variable, backend, type_check
from dbr.core.utils import force_array

_REDUCES = ("mean", "no")


def _compute_dtype(dtype):
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else numpy.dtype(dtype)


def _logsumexp3(a, b, c, xp):
    """Elementwise ``log(exp(a) + exp(b) + exp(c))``, -inf where all three are -inf."""
    m = xp.maximum(xp.maximum(a, b), c)
    m[m == -numpy.inf] = 0
    s = xp.exp(a - m)
    s += xp.exp(b - m)
    s += xp.exp(c - m)
    with numpy.errstate(divide="ignore"):
        out = xp.log(s)
    out += m
    return out


class _Lattice:
    """The CTC lattice of a batch: the extended labels and the alpha/beta recursions.

    Arrays are (time, batch, state) in the compute dtype (float32 for float16
    inputs); ``-inf`` stands for probability 0.
    """

    def __init__(self, xs, t, input_length, label_length, blank_symbol):
        xp = backend.get_array_module(xs[0])
        self.xp = xp
        dtype = _compute_dtype(xs[0].dtype)
        x = xp.stack([a.astype(dtype, copy=False) for a in xs])
        n_time, n_batch, n_vocab = x.shape
        self.shape = x.shape
        x -= x.max(axis=2, keepdims=True)
        x -= xp.log(xp.exp(x).sum(axis=2, keepdims=True))
        self.log_y = x
        n_label = t.shape[1]
        n_state = 2 * n_label + 1
        label_in_range = xp.arange(n_label) < label_length[:, None]
        path = xp.full((n_batch, n_state), blank_symbol, t.dtype)
        path[:, 1::2] = xp.where(label_in_range, t, blank_symbol)
        self.path = path
        self.batch_index = xp.arange(n_batch)
        # A skip from state s - 2 to s is allowed unless both hold the same symbol
        # (blank to blank, or a repeated label).
        skip = xp.zeros((n_batch, n_state), bool)
        skip[:, 2:] = path[:, 2:] != path[:, :-2]
        self.skip = skip
        self.skip_back = self._shift(skip, 2, False, False)
        self.last_time = input_length.astype(numpy.int64) - 1
        self.last_state = 2 * label_length.astype(numpy.int64)
        self.time_mask = xp.arange(n_time)[:, None] < input_length[None, :]
        self.log_p_path = x[:, self.batch_index[:, None], path]
        self.alpha = None
        self.beta = None
        self.gamma = None

    def _shift(self, a, n, fill, forward):
        """``a`` shifted along the states by ``n``: out[:, s] = a[:, s - n] (or s + n)."""
        out = self.xp.full_like(a, fill)
        if n < a.shape[1]:
            if forward:
                out[:, n:] = a[:, :-n]
            else:
                out[:, :-n] = a[:, n:]
        return out

    def _skipped(self, a, fill, forward):
        """``a`` shifted by two states, with ``fill`` where the skip is not allowed."""
        xp = self.xp
        shifted = self._shift(a, 2, fill, forward)
        allowed = self.skip if forward else self.skip_back
        return xp.where(allowed, shifted, fill)

    def run_forward(self):
        """Run the alpha recursion and return ``log p(labels | x)`` per sample."""
        xp = self.xp
        lp = self.log_p_path
        n_time = lp.shape[0]
        alpha = xp.full(lp.shape, -numpy.inf, lp.dtype)
        alpha[0, :, :2] = lp[0, :, :2]
        for t in range(1, n_time):
            prev = alpha[t - 1]
            alpha[t] = _logsumexp3(
                prev,
                self._shift(prev, 1, -numpy.inf, True),
                self._skipped(prev, -numpy.inf, True),
                xp,
            )
            alpha[t] += lp[t]
        self.alpha = alpha
        batch = self.batch_index
        end = xp.maximum(self.last_time, 0)
        last = alpha[end, batch, self.last_state]
        second = alpha[end, batch, xp.maximum(self.last_state - 1, 0)]
        second = xp.where(self.last_state > 0, second, -numpy.inf)
        log_p = xp.logaddexp(last, second)
        # An empty input emits exactly the empty label sequence.
        empty = self.last_time < 0
        log_p = xp.where(empty, xp.where(self.last_state == 0, 0, -numpy.inf), log_p)
        self.log_p = log_p.astype(lp.dtype, copy=False)
        self.feasible = self.log_p > -numpy.inf
        return self.log_p

    def run_backward(self):
        """Run the beta recursion and compute the posteriors of the states and the symbols."""
        xp = self.xp
        lp = self.log_p_path
        n_time, n_batch, n_state = lp.shape
        states = xp.arange(n_state)
        final = (states == self.last_state[:, None]) | (states == self.last_state[:, None] - 1)
        beta = xp.full(lp.shape, -numpy.inf, lp.dtype)
        for t in range(n_time - 1, -1, -1):
            at_end = (self.last_time == t)[:, None]
            before_end = (self.last_time > t)[:, None]
            if t + 1 < n_time:
                nxt = beta[t + 1]
                rec = _logsumexp3(
                    nxt,
                    self._shift(nxt, 1, -numpy.inf, False),
                    self._skipped(nxt, -numpy.inf, False),
                    xp,
                )
                rec += lp[t]
                beta[t] = xp.where(before_end, rec, -numpy.inf)
            beta[t] = xp.where(at_end & final, lp[t], beta[t])
        self.beta = beta
        log_p = xp.where(self.feasible, self.log_p, 0)
        # alpha and beta both include the emission at t, hence one lp is taken off.
        log_posterior = self.alpha + beta
        log_posterior -= lp
        log_posterior -= log_p[None, :, None]
        self.state_posterior = xp.exp(log_posterior, out=log_posterior)
        self.gamma = self.to_symbols(self.state_posterior)

    def to_symbols(self, per_state):
        """Sum (time, batch, state) values into (time, batch, vocabulary) by state symbol."""
        xp = self.xp
        n_time, n_batch, n_vocab = self.shape
        offsets = (
            xp.arange(n_time)[:, None, None] * n_batch + self.batch_index[:, None]
        ) * n_vocab
        index = (offsets + self.path[None]).ravel()
        summed = xp.bincount(
            index, weights=per_state.ravel(), minlength=n_time * n_batch * n_vocab
        )
        return summed.reshape(self.shape).astype(per_state.dtype, copy=False)

    def gradient(self, coef):
        """``coef[b] * (softmax(x) - posterior)`` on the valid time steps: the loss gradient."""
        xp = self.xp
        g = xp.exp(self.log_y)
        g *= self.time_mask[:, :, None]
        g -= self.gamma
        g *= coef[None, :, None]
        return g

    def hessian_product(self, v, coef):
        """``coef[b]`` times the Hessian of ``-log p`` by ``x`` applied to ``v`` (time, batch, V).

        Forward-mode differentiation of the alpha and beta recursions along the
        direction ``u`` that ``v`` induces on the log-softmax.
        """
        xp = self.xp
        y = xp.exp(self.log_y)
        u = v - (y * v).sum(axis=2, keepdims=True)
        du = u[:, self.batch_index[:, None], self.path]
        lp, alpha, beta = self.log_p_path, self.alpha, self.beta
        n_time = lp.shape[0]

        def propagate(d_source, source, target, t, forward):
            # The derivative of a log-sum-exp over the neighbouring states is the
            # softmax-weighted sum of their derivatives.
            base = target - lp[t]
            base[base == -numpy.inf] = 0
            out = xp.exp(source - base) * d_source
            shifted = xp.exp(self._shift(source, 1, -numpy.inf, forward) - base)
            out += shifted * self._shift(d_source, 1, 0, forward)
            skipped = xp.exp(self._skipped(source, -numpy.inf, forward) - base)
            out += skipped * self._skipped(d_source, 0, forward)
            return out

        d_alpha = xp.zeros_like(du)
        d_alpha[0] = du[0] * (alpha[0] > -numpy.inf)
        for t in range(1, n_time):
            out = propagate(d_alpha[t - 1], alpha[t - 1], alpha[t], t, True)
            out += du[t]
            d_alpha[t] = out * (alpha[t] > -numpy.inf)
        d_beta = xp.zeros_like(du)
        for t in range(n_time - 1, -1, -1):
            if t + 1 < n_time:
                out = propagate(d_beta[t + 1], beta[t + 1], beta[t], t, False)
                out[self.last_time == t] = 0
            else:
                out = xp.zeros_like(du[t])
            out += du[t]
            d_beta[t] = out * (beta[t] > -numpy.inf)
        d_log_p = (self.gamma * u).sum(axis=(0, 2))
        d_state = d_alpha
        d_state += d_beta
        d_state -= du
        d_state -= d_log_p[None, :, None]
        d_state *= self.state_posterior
        hv = y * u
        hv *= self.time_mask[:, :, None]
        hv -= self.to_symbols(d_state)
        hv *= coef[None, :, None]
        return hv


def _batch_coefficient(gy, lattice, reduce):
    """The weight of each sample's gradient: gy (or gy / B), 0 for infeasible samples.

    With ``gy`` None, the weight per unit of ``gy``.
    """
    dtype = lattice.log_y.dtype
    coef = lattice.feasible.astype(dtype)
    if reduce == "mean":
        coef /= dtype.type(max(lattice.shape[1], 1))
    if gy is not None:
        coef *= gy.astype(dtype, copy=False)
    return coef


class ConnectionistTemporalClassification(FunctionNode):
    """CTC loss of ``(input_length, label_length, t, x_0, ..., x_{T-1})``."""

    def __init__(self, blank_symbol, reduce="mean"):
        if reduce not in _REDUCES:
            raise ValueError(
                "connectionist_temporal_classification: expected reduce to be one of "
                f"{_REDUCES}, got {reduce!r}"
            )
        self.blank_symbol = blank_symbol
        self.reduce = reduce

    def check_type_forward(self, in_types):
        names = ["input_length", "label_length", "t"] + [
            f"x[{i}]" for i in range(len(in_types) - 3)
        ]
        type_check.argname(in_types, names)
        input_length, label_length, t, x0 = in_types[:4]
        type_check.expect(
            input_length.dtype.kind == "i",
            input_length.ndim == 1,
            label_length.dtype.kind == "i",
            label_length.ndim == 1,
            t.dtype.kind == "i",
            t.ndim == 2,
            x0.dtype.kind == "f",
            x0.ndim == 2,
            t.shape[0] == x0.shape[0],
            input_length.shape[0] == x0.shape[0],
            label_length.shape[0] == x0.shape[0],
        )
        for x in in_types[4:]:
            type_check.expect(x.dtype == x0.dtype, x.shape == x0.shape)

    def _check_values(self, input_length, label_length, t, n_time, n_vocab):
        who = "connectionist_temporal_classification"
        n_label = t.shape[1]
        if bool(((input_length < 0) | (input_length > n_time)).any()):
            raise ValueError(
                f"{who}: expected every input_length in [0, len(x)] = [0, {n_time}], "
                f"got {backend.to_cpu(input_length).tolist()}"
            )
        if bool(((label_length < 0) | (label_length > n_label)).any()):
            raise ValueError(
                f"{who}: expected every label_length in [0, t.shape[1]] = [0, {n_label}], "
                f"got {backend.to_cpu(label_length).tolist()}"
            )
        xp = backend.get_array_module(t)
        used = xp.arange(n_label) < label_length[:, None]
        bad = used & ((t < 0) | (t >= n_vocab))
        if bool(bad.any()):
            raise ValueError(
                f"{who}: expected the labels within label_length to be in [0, {n_vocab}), "
                f"got {int(t[bad][0])}"
            )

    def forward(self, inputs):
        input_length, label_length, t = inputs[:3]
        xs = inputs[3:]
        self.retain_inputs(tuple(range(3, len(inputs))))
        self._check_values(input_length, label_length, t, len(xs), xs[0].shape[1])
        lattice = _Lattice(xs, t, input_length, label_length, self.blank_symbol)
        loss = -lattice.run_forward()
        if self.reduce == "mean":
            loss = loss.sum() / loss.dtype.type(max(loss.size, 1))
        self._lattice = lattice
        return (force_array(loss, xs[0].dtype),)

    def backward(self, indexes, grad_outputs):
        lattice = self._lattice
        if lattice.gamma is None:
            lattice.run_backward()
        xs = self.get_retained_inputs()
        grads = CTCGrad(lattice, self.reduce).apply((*xs, grad_outputs[0]))
        return tuple([None if i < 3 else grads[i - 3] for i in indexes])


class CTCGrad(FunctionNode):
    """The gradients of the CTC loss by each ``x_t``; its inputs are ``(x_0, ..., gy)``."""

    def __init__(self, lattice, reduce):
        self.lattice = lattice
        self.reduce = reduce

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        dtype = inputs[0].dtype
        coef = _batch_coefficient(inputs[-1], self.lattice, self.reduce)
        g = self.lattice.gradient(coef).astype(dtype, copy=False)
        return tuple(g)

    def backward(self, indexes, grad_outputs):
        inputs = self.get_retained_inputs()
        xp = self.lattice.xp
        shape, dtype = inputs[0].shape, inputs[0].dtype
        gg = [xp.zeros(shape, dtype) if g is None else g for g in grad_outputs]
        grads = CTCGradGrad(self.lattice, self.reduce).apply((*inputs, *gg))
        return tuple([grads[i] for i in indexes])


class CTCGradGrad(FunctionNode):
    """Second-order gradients of the CTC loss (not differentiable further).

    Inputs ``(x_0, ..., x_{T-1}, gy, ggx_0, ..., ggx_{T-1})``; outputs the
    gradients of ``sum_t <ggx_t, gx_t>`` by each ``x_t`` and by ``gy``.
    """

    def __init__(self, lattice, reduce):
        self.lattice = lattice
        self.reduce = reduce

    def forward(self, inputs):
        lattice = self.lattice
        xp = lattice.xp
        n_time = lattice.shape[0]
        gy = inputs[n_time]
        dtype = inputs[0].dtype
        cdtype = lattice.log_y.dtype
        v = xp.stack([g.astype(cdtype, copy=False) for g in inputs[n_time + 1 :]])
        hv = lattice.hessian_product(v, _batch_coefficient(gy, lattice, self.reduce))
        hv = hv.astype(dtype, copy=False)
        g_gy = (lattice.gradient(_batch_coefficient(None, lattice, self.reduce)) * v).sum(
            axis=(0, 2)
        )
        if self.reduce == "mean":
            g_gy = g_gy.sum()
        return (*hv, force_array(g_gy, gy.dtype))

    def backward(self, indexes, grad_outputs):
        raise NotImplementedError(
            "connectionist_temporal_classification: third-order gradients are not supported"
        )


def _as_label_array(value, name):
    if isinstance(value, Variable):
        value = value.array
    if not isinstance(value, backend.get_array_types()):
        raise TypeError(
            f"connectionist_temporal_classification: expected {name} to be an array or a "
            f"Variable, got {type(value).__name__}"
        )
    return value


def connectionist_temporal_classification(
    x, t, blank_symbol, input_length=None, label_length=None, reduce="mean"
):
    """Connectionist Temporal Classification (CTC) loss.

    CTC (Graves et al., 2006) trains a sequence labeller when the alignment
    between the inputs and the target labels is unknown: the loss of a
    sample is :math:`-\\log p(l \\mid x)`, where :math:`p(l \\mid x)` sums,
    over every alignment of the label sequence :math:`l` to the inputs (with
    blanks inserted and repeated symbols merged), the product of the
    per-step probabilities ``softmax(x[i])``. It is computed in log space
    with the forward-backward algorithm.

    Args:
        x (list or tuple of Variables or arrays): the unnormalized scores, one
            ``(B, V)`` array per time step (float16, float32 or float64; the
            softmax over ``V`` is applied inside, so pass raw scores).
        t (Variable or array): the label sequences, ``(B, M)`` of a signed
            integer dtype (int32 as in Chainer), each label in ``[0, V)``;
            entries past ``label_length`` are padding and ignored.
        blank_symbol (int): the index of the blank symbol, in ``[0, V)``.
        input_length (Variable, array or None): ``(B,)`` integers, the number
            of valid time steps of each sample (all ``len(x)`` if None).
        label_length (Variable, array or None): ``(B,)`` integers, the length
            of each label sequence (all ``M`` if None).
        reduce (str): ``'mean'`` averages the losses over the batch; ``'no'``
            returns one loss per sample.

    Returns:
        Variable: a 0-d array (``'mean'``) or of shape ``(B,)`` (``'no'``), of
        ``x``'s dtype (float16 is computed in float32). A sample whose labels
        cannot fit its input length has loss ``inf`` and no gradient. The loss
        is differentiable twice by ``x`` (not by the labels or lengths).

    >>> import numpy as np
    >>> x = [np.zeros((1, 2), np.float32)] * 2   # uniform over {blank, a}
    >>> t = np.array([[1]], np.int32)
    >>> loss = connectionist_temporal_classification(x, t, 0)
    >>> round(float(np.exp(-loss.array)), 4)   # paths "ab", "ba", "aa": 3 / 4
    0.75
    """
    who = "connectionist_temporal_classification"
    if not isinstance(x, (list, tuple)) or not x:
        raise TypeError(f"{who}: expected x to be a non-empty list or tuple, got {x!r:.80}")
    if not isinstance(blank_symbol, numbers.Integral) or isinstance(blank_symbol, bool):
        raise TypeError(f"{who}: expected blank_symbol to be an int, got {blank_symbol!r}")
    first = x[0].array if isinstance(x[0], Variable) else x[0]
    if getattr(first, "ndim", None) != 2:
        raise TypeError(
            f"{who}: expected each x[i] to be a (B, V) array or Variable, got "
            f"{type(first).__name__} of shape {getattr(first, 'shape', None)}"
        )
    n_batch, n_vocab = first.shape
    if not 0 <= blank_symbol < n_vocab:
        raise ValueError(f"{who}: expected blank_symbol in [0, {n_vocab}), got {blank_symbol}")
    xp = backend.get_array_module(first)
    t = _as_label_array(t, "t")
    if input_length is None:
        input_length = xp.full(n_batch, len(x), numpy.int32)
    if label_length is None:
        label_length = xp.full(n_batch, t.shape[1] if t.ndim == 2 else 0, numpy.int32)
    input_length = _as_label_array(input_length, "input_length")
    label_length = _as_label_array(label_length, "label_length")
    func = ConnectionistTemporalClassification(int(blank_symbol), reduce)
    return func.apply((input_length, label_length, t, *x))[0]
