"""Waiting on other processes in tests: whether one still runs, and polling for a condition."""

import os
import time

__all__ = ["process_alive", "wait_until"]


def process_alive(pid):
    """Whether process ``pid`` runs (a zombie, exited but not reaped, does not).

    Reads ``/proc/<pid>/stat`` where there is one; elsewhere asks with signal 0,
    which cannot tell a zombie from a running process.
    """
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(condition, seconds, what):
    """Poll ``condition()`` every 20 ms until it is true; fail the test after ``seconds``.

    ``what`` names the awaited event in the failure message.
    """
    import pytest

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not after {seconds} s")
        time.sleep(0.02)
