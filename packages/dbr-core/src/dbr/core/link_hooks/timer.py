"""TimerHook: the time spent in the forward of each link."""

import sys
import time

import numpy

from dbr.core.function_hooks.timer import _drop_abandoned
from dbr.core.link_hook import LinkHook


class TimerHook(LinkHook):
    """Link hook measuring the elapsed time of every link's forward.

    On a link whose device is the CPU the time is read with
    :func:`time.perf_counter`; on a GPU with CUDA events recorded on the
    current stream, so that it counts the GPU work (the hook synchronizes on
    the stop event).

    Links call one another, so the times are nested: a chain's entry includes
    the time of the links it calls, and the entries may add up to more than
    :meth:`total_time`, which counts only the outermost calls. A call that
    raised gets no entry.

    Attributes:
        call_history (list of (str, float)): one ``(link class name, seconds)``
            pair per call, in the order in which the calls finished.

    >>> import numpy as np
    >>> from dbr.core import Chain, Link
    >>> class Double(Link):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> with TimerHook() as hook:
    ...     _ = Double()(np.ones(3))
    >>> [name for name, _ in hook.call_history]
    ['Double']
    """

    name = "TimerHook"
    table = {"sec": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}

    def __init__(self):
        self.call_history = []
        # [link, frame of its Link.__call__, xp, start]
        self._running = []
        self._total_time = 0.0

    def forward_preprocess(self, args):
        """Start the clock for the forward of ``args.link``."""
        caller = sys._getframe(1)
        if self._running:
            _drop_abandoned(self._running, caller)
        xp = args.link.xp
        if xp is numpy:
            start = time.perf_counter()
        else:
            start = xp.cuda.Event()
            start.record()
        self._running.append([args.link, caller, xp, start])

    def forward_postprocess(self, args):
        """Stop the clock for the forward of ``args.link`` and record the time."""
        link = args.link
        running = self._running
        while running and running[-1][0] is not link:
            running.pop()
        if not running:
            return
        _, _, xp, start = running.pop()
        if xp is numpy:
            elapsed = time.perf_counter() - start
        else:
            stop = xp.cuda.Event()
            stop.record()
            stop.synchronize()
            elapsed = xp.cuda.get_elapsed_time(start, stop) / 1e3
        self.call_history.append((type(link).__name__, elapsed))
        if not running:
            self._total_time += elapsed

    def total_time(self):
        """Return the time, in seconds, spent in the outermost link calls timed so far."""
        return self._total_time

    def summary(self):
        """Return the time and number of calls of each link class, in order of first call.

        Returns:
            dict: link class name → ``{'elapsed_time': seconds, 'occurrence': calls}``.
        """
        summary = {}
        for name, seconds in self.call_history:
            record = summary.get(name)
            if record is None:
                record = summary[name] = {"elapsed_time": 0, "occurrence": 0}
            record["elapsed_time"] += seconds
            record["occurrence"] += 1
        return summary

    def print_report(self, unit="auto", file=None):
        """Print a table of the time and number of calls of each link class.

        Args:
            unit (str): ``'sec'``, ``'ms'``, ``'us'`` or ``'ns'``; ``'auto'``
                picks, for all rows, the largest unit in which the longest
                time is at least 1; ``'auto_foreach'`` picks it row by row.
            file: a text stream to write to (``sys.stdout`` when None).

        The table has the columns ``LinkName``, ``ElapsedTime`` (e.g.
        ``41.42sec``) and ``Occurrence``, right-aligned.
        """
        if unit not in ("auto", "auto_foreach") and unit not in self.table:
            raise ValueError(
                f"TimerHook.print_report: expected unit to be 'auto', 'auto_foreach' or "
                f"one of {sorted(self.table)}, got {unit!r}"
            )
        summary = self.summary()
        if unit == "auto" and summary:
            unit = _choose_unit(max(r["elapsed_time"] for r in summary.values()))
        rows = [("LinkName", "ElapsedTime", "Occurrence")]
        for name, record in summary.items():
            seconds = record["elapsed_time"]
            row_unit = _choose_unit(seconds) if unit == "auto_foreach" else unit
            rows.append(
                (
                    name,
                    f"{seconds * self.table[row_unit]:3.2f}{row_unit}",
                    str(record["occurrence"]),
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        file = sys.stdout if file is None else file
        for row in rows:
            file.write("  ".join(cell.rjust(width) for cell, width in zip(row, widths)) + "\n")
        if hasattr(file, "flush"):
            file.flush()


def _choose_unit(seconds):
    for unit in ("sec", "ms", "us"):
        if seconds * TimerHook.table[unit] >= 1:
            return unit
    return "ns"
