"""StatefulPeepholeLSTM: an LSTM layer whose gates also see the cell state."""

import dbr.functions as F
from dbr.core import Chain
from dbr.core.utils import docstring_tail
from dbr.links.connection.linear import Linear
from dbr.links.rnn._state import CELL_HIDDEN_STEP_DOC, CellHiddenState, zero_state


class StatefulPeepholeLSTM(CellHiddenState, Chain):
    """Fully-connected LSTM layer with peephole connections, keeping ``c`` and ``h``.

    With ``u = upward(x) + lateral(h)`` split into the per-unit interleaved
    gate pre-activations ``a, i, f, o`` (as :func:`dbr.functions.lstm` lays
    them out; the lateral term is skipped while ``h`` is None)::

        i  = sigmoid(i + peep_i(c))
        f  = sigmoid(f + peep_f(c))
        c' = tanh(a) * i + f * c
        o  = sigmoid(o + peep_o(c'))
        h' = o * tanh(c')

    with ``c`` starting at zeros. Each call returns ``h'`` and keeps ``c'``
    and ``h'`` as the state.

    Args:
        in_size (int or None): the size of each input vector; None infers it
            at the first call.
        out_size (int): the size of the cell state and of the output.

    Attributes:
        upward (Linear): ``in_size -> 4 * out_size``, with bias.
        lateral (Linear): ``out_size -> 4 * out_size``, without bias.
        peep_i, peep_f, peep_o (Linear): ``out_size -> out_size``, without
            bias, the peephole connections to the input, forget and output gates.
        c (Variable or None): the cell state, ``(B, out_size)``.
        h (Variable or None): the last output, ``(B, out_size)``.

    >>> import numpy
    >>> link = StatefulPeepholeLSTM(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size, out_size):
        super().__init__()
        self.state_size = out_size
        self.reset_state()
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)
            self.peep_i = Linear(out_size, out_size, nobias=True)
            self.peep_f = Linear(out_size, out_size, nobias=True)
            self.peep_o = Linear(out_size, out_size, nobias=True)

    @docstring_tail(CELL_HIDDEN_STEP_DOC)
    def forward(self, x):
        """One step: update ``c`` and ``h`` from ``x`` and return the new output."""
        lstm_in = self.upward(x)
        if self.h is not None:
            lstm_in = lstm_in + self.lateral(self.h)
        c = self.c
        if c is None:
            c = zero_state(self, x.shape[0], x.dtype)
        a, i, f, o = F.separate(F.reshape(lstm_in, (lstm_in.shape[0], self.state_size, 4)), 2)
        i = F.sigmoid(i + self.peep_i(c))
        f = F.sigmoid(f + self.peep_f(c))
        c = F.tanh(a) * i + f * c
        o = F.sigmoid(o + self.peep_o(c))
        self.c = c
        self.h = o * F.tanh(c)
        return self.h
