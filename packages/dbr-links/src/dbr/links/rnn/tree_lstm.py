"""ChildSumTreeLSTM and NaryTreeLSTM: tree-structured LSTM units on ``F.tree_lstm``."""

import dbr.functions as F
from dbr.core import Chain
from dbr.links._checks import is_int
from dbr.links.connection.linear import Linear


def _input_or_zeros(cls_name, cs, hs, x, in_size, xp):
    """Return ``x``, or zeros of ``(B, in_size)`` when it is None (``B`` from a child state)."""
    if x is None:
        base = next((v for v in cs + hs if v is not None), None)
        if base is None:
            raise ValueError(f"{cls_name}: all inputs (cs, hs, x) are None")
        if in_size is None:
            raise ValueError(f"{cls_name}: x is None but in_size is not known yet")
        x = xp.zeros((base.shape[0], in_size), dtype=base.dtype)
    return x


def _zero_missing(vs, shape, dtype, xp):
    if all(v is not None for v in vs):
        return vs
    zero = xp.zeros(shape, dtype=dtype)
    return tuple(zero if v is None else v for v in vs)


def _known_in_size(link):
    W = link.W_x.W
    return link.in_size if W.array is None else W.shape[1]


class ChildSumTreeLSTM(Chain):
    """Child-Sum TreeLSTM unit (Tai et al., 2015): merges any number of children into a node.

    Called as ``link(c_1, ..., c_n, h_1, ..., h_n, x)`` with the cell states
    and outputs of the ``n`` children and the node's input. With
    ``h~ = h_1 + ... + h_n`` and ``[a, i, o | f] = W_x(x)``::

        a, i, o = [a, i, o] + W_h_aio(h~)
        f_k     = f + W_h_f(h_k)                      (one per child)
        c, h    = F.tree_lstm(c_1, ..., c_n, [a, i, o, f_1, ..., f_n])

    The result does not depend on the children's order. Without children
    (``link(x)``), ``c = sigmoid(i) * tanh(a)`` and ``h = sigmoid(o) *
    tanh(c)``. A child's ``c_k`` or ``h_k`` of None counts as zeros; ``x`` of
    None counts as zeros.

    Args:
        in_size (int or None): the size of the input ``x``; None infers it
            at the first call.
        out_size (int): the size of the cell states and outputs.

    Attributes:
        W_x (Linear): ``in_size -> 4 * out_size``, with bias: ``a, i, o, f``
            from the input, in contiguous blocks.
        W_h_aio (Linear): ``out_size -> 3 * out_size``, without bias: ``a, i,
            o`` from the sum of the children's outputs.
        W_h_f (Linear): ``out_size -> out_size``, without bias: each child's
            forget gate from its output.

    >>> import numpy
    >>> link = ChildSumTreeLSTM(3, 2)
    >>> c1 = h1 = c2 = h2 = numpy.zeros((4, 2), numpy.float32)
    >>> c, h = link(c1, c2, h1, h2, numpy.zeros((4, 3), numpy.float32))
    >>> c.shape, h.shape
    ((4, 2), (4, 2))
    """

    def __init__(self, in_size, out_size):
        super().__init__()
        with self.init_scope():
            self.W_x = Linear(in_size, 4 * out_size)
            self.W_h_aio = Linear(out_size, 3 * out_size, nobias=True)
            self.W_h_f = Linear(out_size, out_size, nobias=True)
        self.in_size = in_size
        self.state_size = out_size

    def forward(self, *cshsx):
        """Merge the children's states with the input.

        Args:
            *cshsx: ``c_1, ..., c_n, h_1, ..., h_n, x`` (``n >= 0``): Variables,
                arrays or None, each ``c_k`` and ``h_k`` of shape
                ``(B, out_size)`` and ``x`` of shape ``(B, in_size)``, all of
                one float dtype.

        Returns:
            tuple of Variable: ``(c, h)``, each ``(B, out_size)``.
        """
        if len(cshsx) % 2 != 1:
            raise TypeError(
                "ChildSumTreeLSTM.forward: expected an odd number of arguments "
                f"(c_1..c_n, h_1..h_n, x), got {len(cshsx)}"
            )
        n = len(cshsx) // 2
        cs, hs = cshsx[:n], cshsx[n:-1]
        x = _input_or_zeros("ChildSumTreeLSTM", cs, hs, cshsx[-1], _known_in_size(self), self.xp)
        size = self.state_size
        aio_in, f_in = F.split_axis(self.W_x(x), [3 * size], axis=1)
        if n == 0:
            a, i, o = F.split_axis(aio_in, 3, axis=1)
            c = F.sigmoid(i) * F.tanh(a)
            return c, F.sigmoid(o) * F.tanh(c)

        shape = (x.shape[0], size)
        hs = _zero_missing(hs, shape, x.dtype, self.xp)
        cs = _zero_missing(cs, shape, x.dtype, self.xp)
        h_sum = hs[0]
        for h in hs[1:]:
            h_sum = h_sum + h
        aio_in = aio_in + self.W_h_aio(h_sum)
        fs_in = self.W_h_f(F.concat(hs, axis=0))
        fs_in = F.concat(F.split_axis(fs_in, n, axis=0), axis=1) + F.tile(f_in, (1, n))
        return F.tree_lstm(*cs, F.concat((aio_in, fs_in), axis=1))


class NaryTreeLSTM(Chain):
    """N-ary TreeLSTM unit (Tai et al., 2015; Bowman et al., 2016): a node of ``n_ary`` children.

    Called as ``link(c_1, ..., c_N, h_1, ..., h_N, x)`` with ``N = n_ary``::

        u    = W_x(x) + W_h1(h_1) + ... + W_hN(h_N)
        c, h = F.tree_lstm(c_1, ..., c_N, u)

    where ``u`` holds the contiguous blocks ``a, i, o, f_1, ..., f_N``. The
    result depends on the children's order. A child's ``h_k`` of None skips
    its term, a ``c_k`` of None counts as zeros, and ``x`` of None counts as
    zeros.

    Args:
        in_size (int or None): the size of the input ``x``; None infers it
            at the first call.
        out_size (int): the size of the cell states and outputs.
        n_ary (int): the number of children, 1 or more.

    Attributes:
        W_x (Linear): ``in_size -> (3 + n_ary) * out_size``, with bias.
        W_h1, ..., W_hN (Linear): ``out_size -> (3 + n_ary) * out_size``,
            without bias, one per child position.

    >>> import numpy
    >>> link = NaryTreeLSTM(3, 2, n_ary=2)
    >>> c1 = h1 = c2 = h2 = numpy.zeros((4, 2), numpy.float32)
    >>> c, h = link(c1, c2, h1, h2, numpy.zeros((4, 3), numpy.float32))
    >>> c.shape, h.shape
    ((4, 2), (4, 2))
    """

    def __init__(self, in_size, out_size, n_ary=2):
        if not is_int(n_ary) or n_ary < 1:
            raise ValueError(f"NaryTreeLSTM: n_ary must be an int >= 1, got {n_ary!r}")
        super().__init__()
        with self.init_scope():
            self.W_x = Linear(in_size, (3 + n_ary) * out_size)
            for k in range(1, n_ary + 1):
                setattr(self, f"W_h{k}", Linear(out_size, (3 + n_ary) * out_size, nobias=True))
        self.in_size = in_size
        self.state_size = out_size
        self.n_ary = n_ary

    def forward(self, *cshsx):
        """Merge the ``n_ary`` children's states with the input.

        Args:
            *cshsx: ``c_1, ..., c_N, h_1, ..., h_N, x`` (``2 * n_ary + 1``
                arguments): Variables, arrays or None, each ``c_k`` and ``h_k``
                of shape ``(B, out_size)`` and ``x`` of shape
                ``(B, in_size)``, all of one float dtype.

        Returns:
            tuple of Variable: ``(c, h)``, each ``(B, out_size)``.
        """
        n = self.n_ary
        if len(cshsx) != 2 * n + 1:
            raise TypeError(
                f"NaryTreeLSTM.forward: expected {2 * n + 1} arguments "
                f"(c_1..c_{n}, h_1..h_{n}, x) for n_ary={n}, got {len(cshsx)}"
            )
        cs, hs = cshsx[:n], cshsx[n:-1]
        x = _input_or_zeros("NaryTreeLSTM", cs, hs, cshsx[-1], _known_in_size(self), self.xp)
        tree_lstm_in = self.W_x(x)
        for k, h in enumerate(hs, start=1):
            if h is not None:
                tree_lstm_in = tree_lstm_in + getattr(self, f"W_h{k}")(h)
        cs = _zero_missing(cs, (x.shape[0], self.state_size), x.dtype, self.xp)
        return F.tree_lstm(*cs, tree_lstm_in)
