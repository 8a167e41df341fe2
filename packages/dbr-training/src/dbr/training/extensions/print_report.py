"""PrintReport: print the lines of a LogReport's log as a table."""

import numbers
import sys

from dbr.core.serializers import Deserializer, stored_keys
from dbr.training import extension
from dbr.training.extensions.log_report import LogReport

_SEPARATOR = "  "
_MIN_WIDTH = 10


class PrintReport(extension.Extension):
    """Trainer extension printing the log of a :class:`LogReport` as a table.

    The first call prints a header of the entries; every call then prints the
    log lines added since the previous call, one row each, as Chainer does:
    column ``i`` is ``max(len(entries[i]), 10)`` characters wide, columns are
    separated by two spaces, numbers are formatted with ``'{:<{width}g}'``
    (so ``0.1234567`` shows as ``0.123457``) and a missing entry is left
    blank. Each row is preceded by the ANSI sequence ``'\\033[J'`` (erase
    below the cursor) so that it overwrites a progress bar.

    Args:
        entries (list of str): the log keys to print, in column order.
        log_report (str or LogReport): the name under which a LogReport is
            registered to the trainer (``'LogReport'`` by default), or a
            LogReport instance that this extension calls itself.
        out: the text stream to print to (default None: ``sys.stdout`` as it is when
            the extension writes, so that a redirected stdout is honoured).
    """

    def __init__(self, entries, log_report="LogReport", out=None):
        if isinstance(entries, str) or not isinstance(entries, (list, tuple)):
            raise TypeError(f"PrintReport: expected entries to be a list of str, got {entries!r}")
        for entry in entries:
            if not isinstance(entry, str):
                raise TypeError(
                    f"PrintReport: expected every entry to be a str, got {entry!r} "
                    f"({type(entry).__name__})"
                )
        if not isinstance(log_report, (str, LogReport)):
            raise TypeError(
                f"PrintReport: expected log_report to be a str (the name of a LogReport "
                f"extension) or a LogReport, got {type(log_report).__name__}"
            )
        if out is not None and not hasattr(out, "write"):
            raise TypeError(
                f"PrintReport: expected out to be a text stream with write(), got "
                f"{type(out).__name__}"
            )
        self._entries = list(entries)
        self._log_report = log_report
        self._stream = out
        self._widths = [max(_MIN_WIDTH, len(entry)) for entry in self._entries]
        self._header_printed = False
        self._log_len = 0

    @property
    def _out(self):
        return sys.stdout if self._stream is None else self._stream

    def __call__(self, trainer):
        """Print the header (first call) and the log lines not printed yet."""
        out = self._out
        if not self._header_printed:
            header = _SEPARATOR.join(
                f"{entry:<{width}}" for entry, width in zip(self._entries, self._widths)
            )
            out.write(header + "\n")
            self._header_printed = True

        log_report = self._log_report
        if isinstance(log_report, str):
            log_report = trainer.get_extension(log_report)
        else:
            log_report(trainer)
        log = log_report.log
        while self._log_len < len(log):
            out.write("\033[J")
            out.write(self._format_row(log[self._log_len]))
            self._log_len += 1
        if hasattr(out, "flush"):
            out.flush()

    def _format_row(self, line):
        cells = []
        for entry, width in zip(self._entries, self._widths):
            if entry not in line:
                cells.append(" " * width + _SEPARATOR)
                continue
            value = line[entry]
            if isinstance(value, numbers.Number) and not isinstance(value, complex):
                cells.append(f"{value:<{width}g}{_SEPARATOR}")
            else:
                cells.append(f"{value!s:<{width}}{_SEPARATOR}")
        return "".join(cells) + "\n"

    def serialize(self, serializer):
        """Save or load how many log lines were printed, and an owned LogReport's state.

        Keys: ``_log_len`` (the number of log lines printed) and, for a
        LogReport instance given as ``log_report``, its state under
        ``_log_report/``. A resumed run prints the header again but not the
        lines printed before the snapshot. Chainer 7.8.1 saves no
        ``_log_len`` and prints the restored lines again; a file without the
        key (Chainer's) loads and does the same.
        """
        if isinstance(self._log_report, LogReport):
            self._log_report.serialize(serializer["_log_report"])
        if isinstance(serializer, Deserializer):
            stored = stored_keys(serializer)
            if stored is not None and "_log_len" not in stored:
                return
        log_len = serializer("_log_len", self._log_len)
        if isinstance(log_len, bool) or log_len < 0:
            raise ValueError(
                f"PrintReport.serialize: loaded _log_len={log_len!r}, expected a count >= 0"
            )
        self._log_len = int(log_len)
