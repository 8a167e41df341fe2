"""TimerHook: the time spent in the forward and backward of each function."""

import sys
import time

import numpy

from dbr.core import backend
from dbr.core.function_hook import FunctionHook

_UNITS = {"sec": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


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
    ['MulConstant', 'Sum']
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
            _drop_abandoned(self._running, caller)
        xp = backend.get_array_module(*arrays)
        if xp is numpy:
            start = time.perf_counter()
        else:
            start = xp.cuda.Event()
            start.record()
        # [function, caller frame, xp, start, seconds spent in nested calls]
        self._running.append([function, caller, xp, start, 0.0])

    def _stop(self, function):
        running = self._running
        while running and running[-1][0] is not function:
            running.pop()
        if not running:
            return
        _, _, xp, start, nested = running.pop()
        if xp is numpy:
            elapsed = time.perf_counter() - start
        else:
            stop = xp.cuda.Event()
            stop.record()
            stop.synchronize()
            elapsed = xp.cuda.get_elapsed_time(start, stop) / 1e3
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
        summary = {}
        for label, seconds in self.call_history:
            record = summary.get(label)
            if record is None:
                record = summary[label] = {"elapsed_time": 0.0, "occurrence": 0}
            record["elapsed_time"] += seconds
            record["occurrence"] += 1
        return summary

    def print_report(self, unit="auto", file=None):
        """Print a table of the time and number of calls of each function.

        Args:
            unit (str): ``'sec'``, ``'ms'``, ``'us'``, ``'ns'``, or ``'auto'``
                to pick, per row, the largest unit in which the time is at least 1.
            file: a text stream to write to (``sys.stdout`` when None).

        The table has the columns ``FunctionName``, ``ElapsedTime`` (e.g.
        ``593.05ms``) and ``Occurrence``, right-aligned.
        """
        if unit != "auto" and unit not in _UNITS:
            raise ValueError(
                f"TimerHook.print_report: expected unit to be 'auto' or one of "
                f"{sorted(_UNITS)}, got {unit!r}"
            )
        rows = [("FunctionName", "ElapsedTime", "Occurrence")]
        for label, record in self.summary().items():
            seconds = record["elapsed_time"]
            row_unit = _choose_unit(seconds) if unit == "auto" else unit
            rows.append(
                (label, f"{seconds * _UNITS[row_unit]:3.2f}{row_unit}", str(record["occurrence"]))
            )
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        file = sys.stdout if file is None else file
        for row in rows:
            file.write("  ".join(cell.rjust(width) for cell, width in zip(row, widths)) + "\n")
        if hasattr(file, "flush"):
            file.flush()


def _drop_abandoned(running, frame):
    """Forget open calls that raised, and so never reached their postprocess.

    ``running`` is a stack of entries whose item 1 is the frame that made the
    call; an entry is still open only if its frame is ``frame`` or one of its callers.
    """
    while running:
        target = running[-1][1]
        f = frame
        while f is not None and f is not target:
            f = f.f_back
        if f is not None:
            return
        running.pop()


def _choose_unit(seconds):
    for unit, factor in _UNITS.items():
        if seconds * factor >= 1:
            return unit
    return "ns"
