"""TimerHook: the time spent in the forward and backward of each function."""

import sys

from dbr.core import _timing, backend
from dbr.core.function_hook import FunctionHook


class TimerHook(FunctionHook):
    """Function hook measuring the elapsed time of every forward and backward.

    On NumPy arrays the time is read with :func:`time.perf_counter`; on CuPy
    arrays with CUDA events recorded on the current stream, so that it counts
    the GPU work (the hook synchronizes on the stop event).

    Functions called from inside another one (a backward is usually built from
    other functions' forwards) are timed on their own, and their time is
    subtracted from the enclosing call: every second is accounted to exactly
    one entry, and the entries add up to :meth:`total_time`. A call that
    raised gets no entry.

    Attributes:
        call_history (list of (str, float)): one ``(function label, seconds)``
            pair per forward or backward, in the order in which they finished.

    >>> import numpy as np
    >>> from dbr.core import Variable, ops
    >>> with TimerHook() as hook:
    ...     y = ops.sum(Variable(np.ones(3, np.float32)) * 2.0)
    >>> [label for label, _ in hook.call_history]
    ['_ * 2.0', 'Sum']
    """

    name = "TimerHook"

    def __init__(self):
        self.call_history = []
        self._running = []
        self._total_time = 0.0

    def forward_preprocess(self, function, in_data):
        """Start the clock for the forward of ``function``."""
        self._start(function, in_data)

    def forward_postprocess(self, function, in_data):
        """Stop the clock for the forward of ``function`` and record the time."""
        self._stop(function)

    def backward_preprocess(self, function, in_data, out_grad):
        """Start the clock for the backward of ``function``."""
        self._start(function, in_data + out_grad)

    def backward_postprocess(self, function, in_data, out_grad):
        """Stop the clock for the backward of ``function`` and record the time."""
        self._stop(function)

    def _start(self, function, arrays):
        # The frame that called the hook runs until the function returns: a later
        # call is nested in an open one only if that frame is among its callers.
        caller = sys._getframe(2)
        if self._running:
            _timing.drop_abandoned(self._running, caller)
        xp = backend.get_array_module(*arrays)
        # [function, caller frame, xp, start, seconds spent in nested calls]
        self._running.append([function, caller, xp, _timing.start_clock(xp), 0.0])

    def _stop(self, function):
        running = self._running
        while running and running[-1][0] is not function:
            running.pop()
        if not running:
            return
        _, _, xp, start, nested = running.pop()
        elapsed = _timing.seconds_since(xp, start)
        self.call_history.append((function.label, max(elapsed - nested, 0.0)))
        if running:
            running[-1][4] += elapsed
        else:
            self._total_time += elapsed

    def total_time(self):
        """Return the total time, in seconds, spent in the functions timed so far."""
        return self._total_time

    def summary(self):
        """Return the time and number of calls of each function, in order of first call.

        Returns:
            dict: function label → ``{'elapsed_time': seconds, 'occurrence': calls}``.
        """
        return _timing.summarize(self.call_history)

    def print_report(self, unit="auto", file=None):
        """Print a table of the time and number of calls of each function.

        Args:
            unit (str): ``'sec'``, ``'ms'``, ``'us'``, ``'ns'``, or ``'auto'``
                to pick, per row, the largest unit in which the time is at least 1.
            file: a text stream to write to (``sys.stdout`` when None).

        The table has the columns ``FunctionName``, ``ElapsedTime`` (e.g.
        ``593.05ms``) and ``Occurrence``, right-aligned.
        """
        if unit != "auto" and unit not in _timing.UNITS:
            raise ValueError(
                f"TimerHook.print_report: expected unit to be 'auto' or one of "
                f"{sorted(_timing.UNITS)}, got {unit!r}"
            )
        _timing.write_table(
            ("FunctionName", "ElapsedTime", "Occurrence"),
            self.summary(),
            _timing.choose_unit if unit == "auto" else lambda seconds: unit,
            file,
        )
