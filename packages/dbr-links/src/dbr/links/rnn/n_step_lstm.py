"""NStepLSTMBase, NStepLSTM and NStepBiLSTM: stacked LSTMs over variable-length sequences."""

import dbr.functions as F
from dbr.links.rnn.n_step_rnn import NStepRNNBase


class NStepLSTMBase(NStepRNNBase):
    """Base of the stacked LSTM links: eight weights and biases per layer and direction.

    ``w0`` ... ``w3`` act on the layer's input and ``w4`` ... ``w7`` on the
    hidden state, for the input gate ``i``, the forget gate ``f``, the cell
    input ``a`` and the output gate ``o`` in that order, as in Chainer (see
    :func:`dbr.functions.n_step_lstm`), so that parameters saved from
    Chainer's link give its outputs here. The link carries a cell state
    besides the hidden state.

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.
    """

    n_weights = 8

    @property
    def n_cells(self):
        """2: the LSTM carries a hidden state and a cell state."""
        return 2

    def forward(self, hx, cx, xs, **kwargs):
        """Run the link over the sequences ``xs``.

        Args:
            hx (Variable, array or None): the initial hidden states, of shape
                ``(direction * S, B, N)`` with ``B = len(xs)`` (row ``b`` for
                ``xs[b]``); None means zeros.
            cx (Variable, array or None): the initial cell states, of
                ``hx``'s shape; None means zeros.
            xs (list or tuple of Variables or arrays): the ``B`` sequences,
                ``xs[b]`` of shape ``(L_b, I)``, in any order of lengths, of the
                parameters' dtype.

        Returns:
            tuple: ``(hy, cy, ys)``: the final hidden and cell states (of
            ``hx``'s shape; the backward direction ends at the first element
            of each sequence) and the list of the last layer's outputs,
            ``ys[b]`` of shape ``(L_b, direction * N)``.
        """
        (hy, cy), ys = self._call((hx, cx), xs, kwargs)
        return hy, cy, ys


class NStepLSTM(NStepLSTMBase):
    """Stacked uni-directional LSTM over variable-length sequences.

    Unlike :func:`dbr.functions.n_step_lstm`, the link takes the sequences
    in any order and untransposed.

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.

    >>> import numpy as np
    >>> lstm = NStepLSTM(2, 3, 4, 0.0)
    >>> hy, cy, ys = lstm(None, None, [np.ones((2, 3), np.float32), np.ones((5, 3), np.float32)])
    >>> hy.shape, cy.shape, [y.shape for y in ys]
    ((2, 2, 4), (2, 2, 4), [(2, 4), (5, 4)])
    """

    use_bi_direction = False

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_lstm` on ``args``."""
        return F.n_step_lstm(*args)


class NStepBiLSTM(NStepLSTMBase):
    """Stacked bi-directional LSTM over variable-length sequences.

    Each layer runs an LSTM forward and one backward in time, with separate
    weights, and concatenates their outputs (see
    :func:`dbr.functions.n_step_bilstm`).

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.

    >>> import numpy as np
    >>> lstm = NStepBiLSTM(1, 3, 4, 0.0)
    >>> hy, cy, ys = lstm(None, None, [np.ones((2, 3), np.float32)])
    >>> hy.shape, ys[0].shape
    ((2, 1, 4), (2, 8))
    """

    use_bi_direction = True

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_bilstm` on ``args``."""
        return F.n_step_bilstm(*args)
