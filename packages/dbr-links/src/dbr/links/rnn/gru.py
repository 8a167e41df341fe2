"""Gated recurrent units: StatelessGRU, StatefulGRU and GRU (StatefulGRU's alias)."""

import dbr.functions as F
from dbr.core import Chain
from dbr.core.utils import docstring_tail
from dbr.links.connection.linear import Linear
from dbr.links.rnn._state import HIDDEN_STEP_DOC, HiddenState


class GRUBase(Chain):
    """The six linear maps of a GRU, shared by :class:`StatelessGRU` and :class:`StatefulGRU`.

    Args:
        in_size (int or None): the size of the input ``x``; None infers it at
            the first call.
        out_size (int): the size of the hidden state ``h``.
        init: initializer of ``W_r.W``, ``W_z.W`` and ``W.W`` (an
            initializer, a scalar or an array); None uses LeCunNormal.
        inner_init: initializer of ``U_r.W``, ``U_z.W`` and ``U.W``; None uses
            LeCunNormal.
        bias_init: initializer of the six biases; None means 0.

    Attributes:
        W_r, W_z, W (Linear): ``in_size -> out_size``, from the input to the
            reset gate, the update gate and the candidate state.
        U_r, U_z, U (Linear): ``out_size -> out_size``, from the hidden state.
    """

    def __init__(self, in_size, out_size, init=None, inner_init=None, bias_init=None):
        super().__init__()
        with self.init_scope():
            self.W_r = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_r = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W_z = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_z = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)


class StatelessGRU(GRUBase):
    """Gated recurrent unit that keeps no state: ``h' = gru(h, x)``.

    ::

        r  = sigmoid(W_r(x) + U_r(h))
        z  = sigmoid(W_z(x) + U_z(h))
        h~ = tanh(W(x) + U(r * h))
        h' = z * h~ + (1 - z) * h

    Constructor arguments are those of :class:`GRUBase`:
    ``StatelessGRU(in_size, out_size, init=None, inner_init=None,
    bias_init=None)``.

    >>> import numpy
    >>> link = StatelessGRU(3, 2)
    >>> h = numpy.zeros((4, 2), numpy.float32)
    >>> link(h, numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def forward(self, h, x):
        """One step.

        Args:
            h (Variable or array): the previous hidden state, ``(B, out_size)``.
            x (Variable or array): the input, ``(B, in_size)``, of ``h``'s dtype.

        Returns:
            Variable: the new hidden state, ``(B, out_size)``.
        """
        r = F.sigmoid(self.W_r(x) + self.U_r(h))
        z = F.sigmoid(self.W_z(x) + self.U_z(h))
        h_bar = F.tanh(self.W(x) + self.U(r * h))
        return F.linear_interpolate(z, h_bar, h)


class StatefulGRU(HiddenState, GRUBase):
    """Gated recurrent unit that keeps its hidden state ``h``.

    Each call computes, from the kept ``h``::

        r  = sigmoid(W_r(x) + U_r(h))
        z  = sigmoid(W_z(x) + U_z(h))
        h~ = tanh(W(x) + U(r * h))
        h' = z * h~ + (1 - z) * h

    keeps ``h'`` and returns it. While ``h`` is None (the first step) it is
    taken as zeros, so ``W_r`` and ``U_r`` are not used and
    ``h' = sigmoid(W_z(x)) * tanh(W(x))``.

    Args:
        in_size (int or None): the size of the input; None infers it at the
            first call.
        out_size (int): the size of the hidden state.
        init: initializer of ``W_r.W``, ``W_z.W`` and ``W.W``; None uses
            LeCunNormal.
        inner_init: initializer of ``U_r.W``, ``U_z.W`` and ``U.W``; None uses
            LeCunNormal.
        bias_init: initializer of the six biases (default 0).

    Attributes:
        h (Variable or None): the hidden state, ``(B, out_size)``.

    >>> import numpy
    >>> link = StatefulGRU(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size, out_size, init=None, inner_init=None, bias_init=0):
        super().__init__(in_size, out_size, init, inner_init, bias_init)
        self.state_size = out_size
        self.reset_state()

    @docstring_tail(HIDDEN_STEP_DOC)
    def forward(self, x):
        """One step: update ``h`` from ``x`` and return it."""
        z = self.W_z(x)
        h_bar = self.W(x)
        h = self.h
        if h is None:
            self.h = F.sigmoid(z) * F.tanh(h_bar)
        else:
            r = F.sigmoid(self.W_r(x) + self.U_r(h))
            z = F.sigmoid(z + self.U_z(h))
            h_bar = F.tanh(h_bar + self.U(r * h))
            self.h = F.linear_interpolate(z, h_bar, h)
        return self.h


class GRU(StatefulGRU):
    """Stateful gated recurrent unit: the same link as :class:`StatefulGRU`.

    It takes exactly one argument, ``x``; calling it with ``(h, x)``, as the
    stateless GRU of Chainer v1 was called, raises a ValueError that points
    to :class:`StatelessGRU`.

    >>> import numpy
    >>> link = GRU(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def forward(self, *args):
        """forward(x): one step of :class:`StatefulGRU`."""
        if len(args) != 1:
            msg = f"GRU.forward: expected 1 argument (x), got {len(args)}"
            if len(args) == 2:
                msg += (
                    "; GRU is stateful (an alias of StatefulGRU); "
                    "use StatelessGRU to pass the state h explicitly"
                )
            raise ValueError(msg)
        return super().forward(args[0])
