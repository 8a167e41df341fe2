"""NStepGRUBase, NStepGRU and NStepBiGRU: stacked GRUs over variable-length sequences."""

import dbr.functions as F
from dbr.links.rnn.n_step_rnn import NStepRNNBase


class NStepGRUBase(NStepRNNBase):
    """Base of the stacked GRU links: six weights and biases per layer and direction.

    ``w0`` ... ``w2`` act on the layer's input and ``w3`` ... ``w5`` on the
    hidden state, for the reset gate ``r``, the update gate ``z`` and the
    candidate state in that order (see :func:`dbr.functions.n_step_gru`).

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.
    """

    n_weights = 6


class NStepGRU(NStepGRUBase):
    """Stacked uni-directional GRU over variable-length sequences.

    Unlike :func:`dbr.functions.n_step_gru`, the link takes the sequences
    in any order and untransposed; it is called as ``gru(hx, xs)`` (see
    :meth:`~dbr.links.rnn.n_step_rnn.NStepRNNBase.forward`).

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.

    >>> import numpy as np
    >>> gru = NStepGRU(2, 3, 4, 0.0)
    >>> hy, ys = gru(None, [np.ones((2, 3), np.float32), np.ones((5, 3), np.float32)])
    >>> hy.shape, [y.shape for y in ys]
    ((2, 2, 4), [(2, 4), (5, 4)])
    """

    use_bi_direction = False

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_gru` on ``args``."""
        return F.n_step_gru(*args)


class NStepBiGRU(NStepGRUBase):
    """Stacked bi-directional GRU over variable-length sequences.

    Each layer runs a GRU forward and one backward in time, with separate
    weights, and concatenates their outputs (see
    :func:`dbr.functions.n_step_bigru`).

    Args:
        n_layers, in_size, out_size, dropout, initialW, initial_bias: as for
            :class:`~dbr.links.rnn.n_step_rnn.NStepRNNBase`.

    >>> import numpy as np
    >>> gru = NStepBiGRU(1, 3, 4, 0.0)
    >>> hy, ys = gru(None, [np.ones((2, 3), np.float32)])
    >>> hy.shape, ys[0].shape
    ((2, 1, 4), (2, 8))
    """

    use_bi_direction = True

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_bigru` on ``args``."""
        return F.n_step_bigru(*args)
