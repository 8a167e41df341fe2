"""The clock, the call bookkeeping and the report table shared by the two TimerHooks."""

import sys
import time

import numpy

UNITS = {"sec": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


def start_clock(xp):
    """A start mark: ``perf_counter()`` on the CPU, a CUDA event recorded now on a GPU."""
    if xp is numpy:
        return time.perf_counter()
    start = xp.cuda.Event()
    start.record()
    return start


def seconds_since(xp, start):
    """Seconds since :func:`start_clock`'s mark (on a GPU, synchronizing on a stop event)."""
    if xp is numpy:
        return time.perf_counter() - start
    stop = xp.cuda.Event()
    stop.record()
    stop.synchronize()
    return xp.cuda.get_elapsed_time(start, stop) / 1e3


def drop_abandoned(running, frame):
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


def summarize(call_history):
    """``{name: {'elapsed_time': seconds, 'occurrence': calls}}`` in order of first call."""
    summary = {}
    for name, seconds in call_history:
        record = summary.get(name)
        if record is None:
            record = summary[name] = {"elapsed_time": 0.0, "occurrence": 0}
        record["elapsed_time"] += seconds
        record["occurrence"] += 1
    return summary


def choose_unit(seconds):
    """The largest unit of :data:`UNITS` in which ``seconds`` is at least 1 (else ``'ns'``)."""
    for unit, factor in UNITS.items():
        if seconds * factor >= 1:
            return unit
    return "ns"


def write_table(header, summary, units, file):
    """Write ``summary`` as right-aligned columns under ``header`` (name, time, count).

    ``units(seconds)`` gives the unit of each row's time.
    """
    rows = [header]
    for name, record in summary.items():
        seconds = record["elapsed_time"]
        unit = units(seconds)
        rows.append((name, f"{seconds * UNITS[unit]:3.2f}{unit}", str(record["occurrence"])))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    file = sys.stdout if file is None else file
    for row in rows:
        file.write("  ".join(cell.rjust(width) for cell, width in zip(row, widths)) + "\n")
    if hasattr(file, "flush"):
        file.flush()
