"""Minimal gated units: StatelessMGU and StatefulMGU."""

import dbr.functions as F
from dbr.core import Chain, Variable
from dbr.core.utils import docstring_tail
from dbr.links.connection.linear import Linear
from dbr.links.rnn._state import HIDDEN_STEP_DOC, HiddenState


class MGUBase(Chain):
    """The two linear maps of a minimal gated unit (Zhou et al., 2016).

    Given the hidden state ``h`` and the input ``x``::

        f  = sigmoid(W_f([h, x]))
        h~ = tanh(W_h([f * h, x]))
        h' = f * h~ + (1 - f) * h

    where ``[., .]`` joins along the feature axis.

    Args:
        n_inputs (int): the size of the input ``x``.
        n_units (int): the size of the hidden state ``h``.

    Attributes:
        W_f (Linear): ``n_units + n_inputs -> n_units``, the forget gate.
        W_h (Linear): ``n_units + n_inputs -> n_units``, the candidate state.
    """

    def __init__(self, n_inputs, n_units):
        super().__init__()
        with self.init_scope():
            self.W_f = Linear(n_inputs + n_units, n_units)
            self.W_h = Linear(n_inputs + n_units, n_units)

    def _call_mgu(self, h, x):
        f = F.sigmoid(self.W_f(F.concat((h, x))))
        h_bar = F.tanh(self.W_h(F.concat((f * h, x))))
        return F.linear_interpolate(f, h_bar, h)


class StatelessMGU(MGUBase):
    """Minimal gated unit that keeps no state: ``h' = mgu(h, x)`` (see :class:`MGUBase`).

    Args:
        n_inputs (int): the size of the input.
        n_units (int): the size of the hidden state.

    >>> import numpy
    >>> link = StatelessMGU(3, 2)
    >>> h = numpy.zeros((4, 2), numpy.float32)
    >>> link(h, numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def forward(self, h, x):
        """One step.

        Args:
            h (Variable or array): the previous hidden state, ``(B, n_units)``.
            x (Variable or array): the input, ``(B, n_inputs)``, of ``h``'s dtype.

        Returns:
            Variable: the new hidden state, ``(B, n_units)``.
        """
        return self._call_mgu(h, x)


class StatefulMGU(HiddenState, MGUBase):
    """Minimal gated unit that keeps its hidden state ``h`` (see :class:`MGUBase`).

    ``h`` starts at zeros of the input's dtype; each call replaces it by
    ``mgu(h, x)`` and returns it.

    Args:
        in_size (int): the size of the input.
        out_size (int): the size of the hidden state.

    Attributes:
        h (Variable or None): the hidden state, ``(B, out_size)``.

    >>> import numpy
    >>> link = StatefulMGU(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size, out_size):
        super().__init__(in_size, out_size)
        self._state_size = out_size
        self.reset_state()

    @docstring_tail(HIDDEN_STEP_DOC)
    def forward(self, x):
        """One step: update ``h`` from ``x`` and return it."""
        h = self.h
        if h is None:
            h = Variable(self.xp.zeros((x.shape[0], self._state_size), dtype=x.dtype))
        self.h = self._call_mgu(h, x)
        return self.h
