"""unchain_variables: cut the graphs of the observed Variables after the extensions ran."""

from dbr.core import Variable, config
from dbr.training import extension


class unchain_variables(extension.Extension):  # Chainer's name
    """Trainer extension unchaining every Variable of the observation, to free their graphs.

    Observed Variables keep their computational graph only while
    ``config.keep_graph_on_report`` is on (for example during the first
    iteration under :class:`DumpGraph`). With priority 0, this extension runs
    after every other extension of the iteration and calls
    ``unchain_backward()`` on each Variable of ``trainer.observation``, so
    that no graph outlives the iteration. It fires in the iterations during
    which the flag was on (the flag's value at the previous call, or at
    :meth:`initialize`, tells whether the iteration just done kept graphs).
    """

    priority = 0

    def __init__(self):
        self._previous_flag = None

    def initialize(self, trainer):
        """Record the current ``keep_graph_on_report`` flag."""
        self._previous_flag = config.keep_graph_on_report

    def trigger(self, trainer):
        """Fire if the flag was on during the iteration just done."""
        fired = bool(self._previous_flag)
        self._previous_flag = config.keep_graph_on_report
        return fired

    def __call__(self, trainer):
        """Unchain (``unchain_backward``) every Variable of the observation."""
        for value in trainer.observation.values():
            if isinstance(value, Variable):
                value.unchain_backward()
