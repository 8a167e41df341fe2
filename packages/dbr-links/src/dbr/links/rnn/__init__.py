"""Recurrent links: single-step (stateful and stateless) cells, n-step stacks, tree LSTMs."""

from dbr.links.rnn.gru import GRU, StatefulGRU, StatelessGRU
from dbr.links.rnn.lstm import LSTM, StatelessLSTM
from dbr.links.rnn.mgu import StatefulMGU, StatelessMGU
from dbr.links.rnn.n_step_gru import NStepBiGRU, NStepGRU, NStepGRUBase
from dbr.links.rnn.n_step_lstm import NStepBiLSTM, NStepLSTM, NStepLSTMBase
from dbr.links.rnn.n_step_rnn import (
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepRNNBase,
    NStepRNNReLU,
    NStepRNNTanh,
)
from dbr.links.rnn.peephole import StatefulPeepholeLSTM
from dbr.links.rnn.tree_lstm import ChildSumTreeLSTM, NaryTreeLSTM
from dbr.links.rnn.zoneoutlstm import StatefulZoneoutLSTM

__all__ = [
    "GRU",
    "LSTM",
    "ChildSumTreeLSTM",
    "NStepBiGRU",
    "NStepBiLSTM",
    "NStepBiRNNReLU",
    "NStepBiRNNTanh",
    "NStepGRU",
    "NStepGRUBase",
    "NStepLSTM",
    "NStepLSTMBase",
    "NStepRNNBase",
    "NStepRNNReLU",
    "NStepRNNTanh",
    "NaryTreeLSTM",
    "StatefulGRU",
    "StatefulMGU",
    "StatefulPeepholeLSTM",
    "StatefulZoneoutLSTM",
    "StatelessGRU",
    "StatelessLSTM",
    "StatelessMGU",
]
