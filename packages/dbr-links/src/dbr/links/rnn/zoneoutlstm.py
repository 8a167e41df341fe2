"""StatefulZoneoutLSTM: an LSTM layer regularised by zoneout."""

import dbr.functions as F
from dbr.core import Chain
from dbr.core.utils import docstring_tail
from dbr.links.connection.linear import Linear
from dbr.links.rnn._state import CELL_HIDDEN_STEP_DOC, SettableCellHiddenState, zero_state


class StatefulZoneoutLSTM(SettableCellHiddenState, Chain):
    """Fully-connected LSTM layer with zoneout on its cell state and output.

    With ``u = upward(x) + lateral(h)`` split into the per-unit interleaved
    gate pre-activations ``a, i, f, o`` (the lateral term is skipped at the
    first step, where ``c`` and ``h`` start at zeros)::

        c~ = tanh(a) * sigmoid(i) + sigmoid(f) * c
        c' = zoneout(c, c~, c_ratio)
        h' = zoneout(h, sigmoid(o) * tanh(c~), h_ratio)

    :func:`dbr.functions.zoneout` keeps each element of the previous state
    with probability ``ratio`` in training mode (``config.train``) and takes
    the new value everywhere in test mode, where this is a plain LSTM.

    Args:
        in_size (int or None): the size of each input vector; None infers it
            at the first call.
        out_size (int): the size of the cell state and of the output.
        c_ratio (float): the zoneout ratio of the cell state, in ``[0, 1]``.
        h_ratio (float): the zoneout ratio of the output, in ``[0, 1]``.

    Attributes:
        upward (Linear): ``in_size -> 4 * out_size``, with bias.
        lateral (Linear): ``out_size -> 4 * out_size``, without bias.
        c (Variable or None): the cell state, ``(B, out_size)``.
        h (Variable or None): the last output, ``(B, out_size)``.

    >>> import numpy
    >>> link = StatefulZoneoutLSTM(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size, out_size, c_ratio=0.5, h_ratio=0.5, **kwargs):
        if "train" in kwargs:
            raise ValueError(
                "StatefulZoneoutLSTM: the train argument is not supported anymore; "
                "use using_config('train', ...)"
            )
        if kwargs:
            raise TypeError(
                f"StatefulZoneoutLSTM: got unexpected keyword arguments {sorted(kwargs)}"
            )
        for name, ratio in (("c_ratio", c_ratio), ("h_ratio", h_ratio)):
            if not 0.0 <= ratio <= 1.0:
                raise ValueError(f"StatefulZoneoutLSTM: {name} must be in [0, 1], got {ratio!r}")
        super().__init__()
        self.state_size = out_size
        self.c_ratio = c_ratio
        self.h_ratio = h_ratio
        self.reset_state()
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)

    @docstring_tail(CELL_HIDDEN_STEP_DOC)
    def forward(self, x):
        """One step: update ``c`` and ``h`` from ``x`` and return the new output."""
        lstm_in = self.upward(x)
        h = self.h
        if h is None:
            h = zero_state(self, x.shape[0], x.dtype)
        else:
            lstm_in = lstm_in + self.lateral(h)
        c = self.c
        if c is None:
            c = zero_state(self, x.shape[0], x.dtype)
        a, i, f, o = F.separate(F.reshape(lstm_in, (lstm_in.shape[0], self.state_size, 4)), 2)
        c_new = F.tanh(a) * F.sigmoid(i) + F.sigmoid(f) * c
        self.c = F.zoneout(c, c_new, self.c_ratio)
        self.h = F.zoneout(h, F.sigmoid(o) * F.tanh(c_new), self.h_ratio)
        return self.h
