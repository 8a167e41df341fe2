"""TimerHook: the time spent in the forward of each link."""

import sys

from dbr.core import _timing
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
            _timing.drop_abandoned(self._running, caller)
        xp = args.link.xp
        self._running.append([args.link, caller, xp, _timing.start_clock(xp)])

    def forward_postprocess(self, args):
        """Stop the clock for the forward of ``args.link`` and record the time."""
        link = args.link
        running = self._running
        while running and running[-1][0] is not link:
            running.pop()
        if not running:
            return
        _, _, xp, start = running.pop()
        elapsed = _timing.seconds_since(xp, start)
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
        return _timing.summarize(self.call_history)

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
            unit = _timing.choose_unit(max(r["elapsed_time"] for r in summary.values()))
        _timing.write_table(
            ("LinkName", "ElapsedTime", "Occurrence"),
            summary,
            _timing.choose_unit if unit == "auto_foreach" else lambda seconds: unit,
            file,
        )
