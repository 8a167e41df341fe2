"""The state handling of the stateful single-step links (private).

:class:`HiddenState` keeps ``h`` (StatefulGRU, StatefulMGU) and
:class:`CellHiddenState` keeps ``c`` and ``h`` (StatefulPeepholeLSTM, and
through :class:`SettableCellHiddenState`, which adds ``set_state``, LSTM
and StatefulZoneoutLSTM): they move the state with the parameters in
``to_device`` and forget it in ``reset_state``. They are mixins, listed
before the link's :class:`~dbr.core.Chain` base.
"""

from dbr.core import Variable

# The Args/Returns of the stateful links' ``forward`` (one step on ``(B, in_size)``),
# appended to its one-line summary, hence the blank line first.
HIDDEN_STEP_DOC = """

        Args:
            x (Variable or array): the input, ``(B, in_size)``, float16/32/64.

        Returns:
            Variable: the new hidden state, ``(B, out_size)``.
"""
CELL_HIDDEN_STEP_DOC = """

        Args:
            x (Variable or array): the input, ``(B, in_size)``, float16/32/64.

        Returns:
            Variable: the new output ``h``, ``(B, out_size)``.
"""


def check_states(link, **states):
    """Raise TypeError unless every value of ``states`` is a Variable, naming ``link``'s class."""
    for name, value in states.items():
        if not isinstance(value, Variable):
            raise TypeError(
                f"{type(link).__name__}.set_state: expected {name} to be a Variable, "
                f"got {type(value).__name__}"
            )


def zero_state(link, batch, dtype):
    """Zeros of shape ``(batch, link.state_size)`` and ``dtype`` on ``link``'s device."""
    return Variable(link.xp.zeros((batch, link.state_size), dtype=dtype))


class HiddenState:
    """Mixin: the hidden state ``h`` of a stateful link."""

    def to_device(self, device):
        """Move the parameters and the state ``h`` to ``device``; returns this link."""
        super().to_device(device)
        if self.h is not None:
            self.h.to_device(self.device)
        return self

    def set_state(self, h):
        """Set the hidden state ``h`` (a Variable), moved to the link's device."""
        check_states(self, h=h)
        h.to_device(self.device)
        self.h = h

    def reset_state(self):
        """Forget the state: set ``h`` to None."""
        self.h = None


class CellHiddenState:
    """Mixin: the cell state ``c`` and the output ``h`` of a stateful LSTM link."""

    def to_device(self, device):
        """Move the parameters and the state (``c``, ``h``) to ``device``; returns this link."""
        super().to_device(device)
        for state in (self.c, self.h):
            if state is not None:
                state.to_device(self.device)
        return self

    def reset_state(self):
        """Forget the state: set ``c`` and ``h`` to None."""
        self.c = self.h = None


class SettableCellHiddenState(CellHiddenState):
    """Mixin: :class:`CellHiddenState` with ``set_state(c, h)`` (LSTM, StatefulZoneoutLSTM)."""

    def set_state(self, c, h):
        """Set the cell state ``c`` and the output ``h`` (Variables) on the link's device."""
        check_states(self, c=c, h=h)
        c.to_device(self.device)
        h.to_device(self.device)
        self.c = c
        self.h = h
