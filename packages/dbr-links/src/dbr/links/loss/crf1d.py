"""CRF1d: a linear-chain conditional random field holding its transition costs."""

import numpy

import dbr.functions as F
from dbr.core import Link, Parameter, initializers


def _descending_order(seqs):
    """Indexes that sort ``seqs`` by decreasing length (stable among equal lengths)."""
    return sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))


def _inverse(order):
    inverse = numpy.empty(len(order), numpy.int32)
    inverse[order] = numpy.arange(len(order), dtype=numpy.int32)
    return inverse


class CRF1d(Link):
    """Linear-chain CRF loss layer; wraps :func:`dbr.functions.crf1d`.

    Args:
        n_label (int): the number of labels ``K``.
        initial_cost: the initializer of the transition costs (an
            initializer, a scalar or a ``(K, K)`` array); zeros when None.

    Attributes:
        cost (Parameter): ``(K, K)``, ``cost[s, t]`` the score of the
            transition from label ``s`` to label ``t``.

    >>> import numpy as np
    >>> crf = CRF1d(2)
    >>> xs = [np.zeros((1, 2), np.float32)] * 3
    >>> ys = [np.zeros(1, np.int32)] * 3
    >>> crf(xs, ys).array  # log(8): 8 equally likely label sequences
    array(2.0794415, dtype=float32)
    """

    def __init__(self, n_label, initial_cost=None):
        super().__init__()
        if not isinstance(n_label, (int, numpy.integer)) or isinstance(n_label, bool):
            raise TypeError(f"CRF1d: expected n_label to be an int, got {type(n_label).__name__}")
        if n_label < 1:
            raise ValueError(f"CRF1d: expected n_label >= 1, got {n_label}")
        if initial_cost is None:
            initial_cost = initializers.Zero()
        with self.init_scope():
            self.cost = Parameter(
                initializers.get_initializer(initial_cost), (int(n_label), int(n_label))
            )

    def forward(self, xs, ys, reduce="mean", transpose=False):
        """The negative log-likelihood of the label sequences ``ys`` given the scores ``xs``.

        Args:
            xs (list of Variables or arrays): with ``transpose=False``, the
                ``(B_i, K)`` scores of each position, already sorted by
                decreasing length and transposed (see
                :func:`dbr.functions.crf1d`); with ``transpose=True``, one
                ``(L_b, K)`` array per sequence, in any order.
            ys (list of arrays): the int32 labels laid out as ``xs``
                (``(B_i,)`` per position, or ``(L_b,)`` per sequence).
            reduce (str): ``'mean'`` (the summed losses divided by the batch
                size) or ``'no'`` (one loss per sequence).
            transpose (bool): whether ``xs`` and ``ys`` are given per
                sequence; they are then sorted and transposed here, and a
                ``'no'`` loss is returned in the order of the given sequences.

        Returns:
            Variable: the 0-d mean loss, or the ``(B,)`` losses.
        """
        if not transpose:
            return F.crf1d(self.cost, xs, ys, reduce)
        order = _descending_order(xs)
        xs = F.transpose_sequence([xs[i] for i in order])
        ys = F.transpose_sequence([ys[i] for i in order])
        loss = F.crf1d(self.cost, xs, ys, reduce)
        if reduce == "no":
            loss = loss[_inverse(order)]
        return loss

    def argmax(self, xs, transpose=False):
        """The most likely label sequences (Viterbi); wraps :func:`dbr.functions.argmax_crf1d`.

        Args:
            xs (list of Variables or arrays): the scores, laid out as in
                :meth:`forward` for the same ``transpose``.
            transpose (bool): whether ``xs`` holds one ``(L_b, K)`` array per
                sequence (in any order).

        Returns:
            tuple: ``(score, path)``: ``score``, a ``(B,)`` Variable, the score
            of each best sequence; ``path``, the int32 labels: with
            ``transpose=False`` a list of ``(B_i,)`` arrays, one per
            position; with ``transpose=True`` a list of ``(L_b,)`` arrays,
            one per given sequence, in their order (``score`` too).
        """
        if not transpose:
            return F.argmax_crf1d(self.cost, xs)
        order = _descending_order(xs)
        score, path = F.argmax_crf1d(self.cost, F.transpose_sequence([xs[i] for i in order]))
        path = [p.array for p in F.transpose_sequence(path)]
        inverse = _inverse(order)
        return score[inverse], [path[i] for i in inverse]

    @property
    def printable_specs(self):
        """``n_label``, shown by ``str(link)``."""
        yield "n_label", self.cost.shape[0]
