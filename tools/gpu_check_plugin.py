"""A pytest plugin of tools/gpu-check: each outcome as it happens, and a rerun filter.

Loaded with ``-p gpu_check_plugin`` (tools/ on ``sys.path``). It reads:

- ``GPU_CHECK_SUITE``: the suite's name, the first column of every line written;
- ``GPU_CHECK_OUTCOMES``: a file to which lines are appended as soon as they
  are known: ``suite<TAB>collected<TAB>0<TAB>N`` once the selection is made,
  then per test ``suite<TAB>outcome<TAB>seconds<TAB>nodeid`` (outcome passed,
  failed, error or skipped; a skip adds a fifth column, its reason), so that a
  run killed at its deadline still says what ran and what did not;
- ``GPU_CHECK_FAILURES``: a file to which each failure's node id and report
  are appended (a long report cut to its first error lines and its end; after
  three failures with the same message in a suite, the message alone, so that
  a systematic failure does not fill the file);
- ``GPU_CHECK_RERUN``: an earlier run's outcomes file; when set, only the tests
  of this suite that did not pass or skip there are kept (with
  ``GPU_CHECK_RERUN_SKIPPED=1``, the skipped ones too).

Under pytest-xdist the controlling process writes the outcomes and the first
worker the collected count; every worker applies the same filter, so their
collections agree.
"""

import os

import pytest

_FAILURE_CHARS = 4000
_HEAD_ERROR_LINES = 25
_FULL_REPORTS_PER_MESSAGE = 3
_messages = {}


def _suite():
    return os.environ.get("GPU_CHECK_SUITE", "tests")


def _append(variable, text):
    path = os.environ.get(variable)
    if path:
        # One write per line on a file opened for appending: lines from suites
        # running side by side do not interleave.
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def _settled(path, suite):
    """Node ids of ``suite`` that passed (or skipped) in the outcomes file ``path``."""
    settled, bad = set(), set()
    keep_skips = os.environ.get("GPU_CHECK_RERUN_SKIPPED") != "1"
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4 or fields[0] != suite:
                continue
            if fields[1] == "passed" or (fields[1] == "skipped" and keep_skips):
                settled.add(fields[3])
            elif fields[1] in ("failed", "error"):
                bad.add(fields[3])
    return settled - bad


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    path = os.environ.get("GPU_CHECK_RERUN")
    if path:
        settled = _settled(path, _suite())
        dropped = [item for item in items if item.nodeid in settled]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item.nodeid not in settled]
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        _append("GPU_CHECK_OUTCOMES", f"{_suite()}\tcollected\t0\t{len(items)}\n")


def _outcome(report):
    if report.when == "call":
        return report.outcome
    if report.failed:
        return "error"
    if report.skipped:
        return "skipped"
    return None


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    return " ".join(reason.split())[:300]


def _shorten(text):
    """The report if short; else its first error lines (the assertion's summary) and its end."""
    if len(text) <= _FAILURE_CHARS:
        return text
    errors = [line for line in text.splitlines() if line.startswith("E ")][:_HEAD_ERROR_LINES]
    head = "\n".join(errors)[: _FAILURE_CHARS // 2]
    return f"{head}\n...\n{text[-_FAILURE_CHARS // 2 :]}"


def pytest_runtest_logreport(report):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    outcome = _outcome(report)
    if outcome is None:
        return
    line = f"{_suite()}\t{outcome}\t{report.duration:.3f}\t{report.nodeid}"
    if outcome == "skipped":
        line += "\t" + _skip_reason(report)
    _append("GPU_CHECK_OUTCOMES", line + "\n")
    if outcome in ("failed", "error"):
        crash = getattr(report.longrepr, "reprcrash", None)
        message = " ".join(str(getattr(crash, "message", "")).split())[:300]
        _messages[message] = _messages.get(message, 0) + 1
        if message and _messages[message] > _FULL_REPORTS_PER_MESSAGE:
            text = f"(as above) {message}"
        else:
            text = _shorten(report.longreprtext or "")
        _append(
            "GPU_CHECK_FAILURES",
            f"=== {_suite()} {outcome} ({report.when}): {report.nodeid}\n{text}\n",
        )
