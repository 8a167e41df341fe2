"""LSTM and StatelessLSTM: fully-connected LSTM layers built on :func:`dbr.functions.lstm`."""

import dbr.functions as F
from dbr.core import Chain, initializers
from dbr.links._checks import check_size
from dbr.links.connection.linear import Linear
from dbr.links.rnn._state import SettableCellHiddenState, zero_state

_FORGET_GATE = 2  # position of f in F.lstm's per-unit gate order (a, i, f, o)


class _ByGate(initializers.Initializer):
    """Fills an LSTM parameter gate by gate, handing each gate's part to its own initializer.

    A weight stacks the four gates' ``(state_size, in_size)`` blocks along its
    rows; the bias interleaves them per unit, as :func:`dbr.functions.lstm`
    reads them, and each gate's entries are handed over as a ``(1,
    state_size)`` view. So an initializer depending on the fans sees one
    gate's matrix, as in Chainer; being the Parameter's own initializer, it
    also refills by gate in ``copy('init')``.
    """

    def __init__(self, gate_initializers, interleaved):
        dtypes = (getattr(init, "dtype", None) for init in gate_initializers)
        super().__init__(next(filter(None, dtypes), None))
        self.gate_initializers = gate_initializers
        self.interleaved = interleaved

    def fill_gate(self, array, k):
        """Fill gate ``k``'s part of ``array`` (0 to 3, in the order a, i, f, o)."""
        if self.interleaved:
            part = array.reshape(1, -1, 4)[:, :, k]
        else:
            size = array.shape[0] // 4
            part = array[k * size : (k + 1) * size]
        self.gate_initializers[k](part)

    def _fill(self, array):
        for k in range(4):
            self.fill_gate(array, k)


def _zeros_of(initializer):
    """Zeros of ``initializer``'s dtype: what Chainer's LSTM holds until it draws."""
    return initializers.Constant(0, initializer.dtype)


class LSTMBase(Chain):
    """The parameters shared by :class:`LSTM` and :class:`StatelessLSTM`.

    They are drawn in Chainer's order (gate block by gate block of
    ``lateral.W`` and ``upward.W`` alternately, then ``upward.b``), at
    construction, or at the first call when ``in_size`` is None (until then
    ``lateral.W`` and ``upward.b`` hold zeros), so that a seeded
    ``numpy.random`` gives Chainer's weights.

    Args:
        in_size (int or None): the size of each input vector; None infers it
            at the first call. With ``out_size`` omitted, the only argument
            given is ``out_size`` (``LSTMBase(20)`` is ``LSTMBase(None, 20)``).
        out_size (int): the size of the cell state and of the output.
        lateral_init: initializer of ``lateral.W`` (an initializer, a scalar
            or an array), applied to each gate's block; None uses LeCunNormal.
        upward_init: initializer of ``upward.W``, likewise.
        bias_init: initializer of the cell-input, input-gate and output-gate
            entries of ``upward.b``; None means 0.
        forget_bias_init: initializer of the forget-gate entries of
            ``upward.b``; None means 1.

    Attributes:
        upward (Linear): ``in_size -> 4 * out_size``, the input's gate
            pre-activations, interleaved per unit as ``F.lstm`` reads them.
        lateral (Linear): ``out_size -> 4 * out_size`` without bias, the
            previous output's contribution.
        state_size (int): ``out_size``.
    """

    def __init__(
        self,
        in_size,
        out_size=None,
        lateral_init=None,
        upward_init=None,
        bias_init=None,
        forget_bias_init=None,
    ):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        name = type(self).__name__
        check_size(name, "in_size", in_size, True)
        check_size(name, "out_size", out_size, False)
        if bias_init is None:
            bias_init = 0
        if forget_bias_init is None:
            forget_bias_init = 1
        self.state_size = out_size
        self.lateral_init = lateral_init
        self.upward_init = upward_init
        self.bias_init = bias_init
        self.forget_bias_init = forget_bias_init
        upward_W = _ByGate([initializers.get_initializer(upward_init)] * 4, interleaved=False)
        lateral_W = _ByGate([initializers.get_initializer(lateral_init)] * 4, interleaved=False)
        bias_gates = [initializers.get_initializer(bias_init)] * 4
        bias_gates[_FORGET_GATE] = initializers.get_initializer(forget_bias_init)
        bias = _ByGate(bias_gates, interleaved=True)
        with self.init_scope():
            self.upward = Linear(
                in_size, 4 * out_size, initialW=_zeros_of(upward_W), initial_bias=_zeros_of(bias)
            )
            self.lateral = Linear(
                out_size, 4 * out_size, nobias=True, initialW=_zeros_of(lateral_W)
            )
        self.upward.W.initializer = upward_W
        self.upward.b.initializer = bias
        self.lateral.W.initializer = lateral_W
        if in_size is not None:
            self._initialize_params()

    def _initialize_params(self):
        """Draw every parameter in Chainer's order.

        Gate block ``k`` of ``lateral.W``, then of ``upward.W``, for ``k`` = 0
        to 3, then the bias, so that a seeded ``numpy.random`` gives Chainer's
        weights.
        """
        lateral, upward, bias = self.lateral.W, self.upward.W, self.upward.b
        for k in range(4):
            lateral.initializer.fill_gate(lateral.array, k)
            upward.initializer.fill_gate(upward.array, k)
        for k in range(4):
            bias.initializer.fill_gate(bias.array, k)

    def _initialize_on_first_call(self, x):
        """At the first call of a lazy link, create ``upward.W`` and draw every parameter.

        As in Chainer, ``upward.W`` is created as zeros and everything is then
        drawn again (see :meth:`_initialize_params`).
        """
        W = self.upward.W
        if W.array is not None:
            return
        in_size = 1
        for n in x.shape[1:]:
            in_size *= n
        by_gate, W.initializer = W.initializer, _zeros_of(W.initializer)
        try:
            self.upward._initialize_params(in_size)
        finally:
            W.initializer = by_gate
        self._initialize_params()


class StatelessLSTM(LSTMBase):
    """Fully-connected LSTM layer that keeps no state: ``(c, h) = lstm(c, h, x)``.

    With ``u = upward(x) + lateral(h)`` (gate pre-activations interleaved
    per unit), it returns ``F.lstm(c, u)``. Constructor arguments are those
    of :class:`LSTMBase`: ``StatelessLSTM(in_size, out_size=None,
    lateral_init=None, upward_init=None, bias_init=None,
    forget_bias_init=None)``; ``StatelessLSTM(20)`` infers ``in_size``.

    >>> import numpy
    >>> link = StatelessLSTM(3, 2)
    >>> c, h = link(None, None, numpy.zeros((4, 3), numpy.float32))
    >>> c.shape, h.shape
    ((4, 2), (4, 2))
    """

    def forward(self, c, h, x):
        """One step.

        Args:
            c (Variable, array or None): the previous cell state,
                ``(B, out_size)``; None means zeros.
            h (Variable, array or None): the previous output, ``(B, out_size)``;
                None skips the lateral term.
            x (Variable or array): the input, ``(B, in_size)`` (or ``(B, ...)``
                holding ``in_size`` elements per sample), float16/32/64.

        Returns:
            tuple of Variable: ``(c_new, h_new)``, each ``(B, out_size)``.
        """
        self._initialize_on_first_call(x)
        lstm_in = self.upward(x)
        if h is not None:
            lstm_in = lstm_in + self.lateral(h)
        if c is None:
            c = zero_state(self, x.shape[0], x.dtype)
        return F.lstm(c, lstm_in)


class LSTM(SettableCellHiddenState, LSTMBase):
    """Fully-connected LSTM layer that keeps its cell state ``c`` and output ``h``.

    Each call computes ``u = upward(x) + lateral(h)`` (the lateral term is
    skipped while ``h`` is None), then ``c, h = F.lstm(c, u)`` with ``c``
    starting at zeros, and returns ``h``.

    The batch may shrink from one call to the next (sequences sorted by
    decreasing length): with ``B`` rows in ``x``, only ``c[:B]`` and
    ``h[:B]`` are updated and the other rows are kept, so ``c`` and ``h``
    keep the first batch's size. A larger batch than the state's is an error.

    Args:
        in_size (int or None): the size of each input vector; None (or
            omitting it, ``LSTM(20)``) infers it at the first call.
        out_size (int): the size of the cell state and of the output.
        lateral_init: initializer of ``lateral.W``, applied to each gate's
            ``(out_size, out_size)`` block; None uses LeCunNormal.
        upward_init: initializer of ``upward.W``, applied to each gate's
            ``(out_size, in_size)`` block; None uses LeCunNormal.
        bias_init: initializer of the cell-input, input-gate and output-gate
            biases; None means 0.
        forget_bias_init: initializer of the forget-gate biases; None means 1.

    Attributes:
        upward (Linear): the input connections, with bias ``upward.b``.
        lateral (Linear): the recurrent connections, without bias.
        c (Variable or None): the cell state, ``(B, out_size)``.
        h (Variable or None): the last output, ``(B, out_size)``.

    >>> import numpy
    >>> link = LSTM(3)
    >>> link(numpy.zeros((4, 5), numpy.float32)).shape
    (4, 3)
    >>> link.upward.W.shape
    (12, 5)
    """

    def __init__(
        self,
        in_size,
        out_size=None,
        lateral_init=None,
        upward_init=None,
        bias_init=None,
        forget_bias_init=None,
    ):
        super().__init__(in_size, out_size, lateral_init, upward_init, bias_init, forget_bias_init)
        self.reset_state()

    def forward(self, x):
        """One step: update ``c`` and ``h`` from ``x`` and return the new output.

        Args:
            x (Variable or array): the input, ``(B, in_size)`` (or ``(B, ...)``),
                float16/32/64, with ``B`` at most the state's batch size.

        Returns:
            Variable: the output for the ``B`` rows of ``x``, ``(B, out_size)``.
        """
        batch = x.shape[0]
        self._initialize_on_first_call(x)
        lstm_in = self.upward(x)
        h = self.h
        h_rest = None
        if h is not None:
            h_size = h.shape[0]
            if batch == 0:
                h_rest = h
            elif h_size < batch:
                raise TypeError(
                    f"{type(self).__name__}: the batch size of x ({batch}) must be equal to "
                    f"or less than that of the previous state h ({h_size})"
                )
            elif h_size > batch:
                h_update, h_rest = F.split_axis(h, [batch], axis=0)
                lstm_in = lstm_in + self.lateral(h_update)
            else:
                lstm_in = lstm_in + self.lateral(h)
        if self.c is None:
            self.c = zero_state(self, batch, x.dtype)
        self.c, y = F.lstm(self.c, lstm_in)
        if h_rest is None:
            self.h = y
        elif batch == 0:
            self.h = h_rest
        else:
            self.h = F.concat((y, h_rest), axis=0)
        return y
