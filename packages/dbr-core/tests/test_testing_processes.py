import os
import subprocess
import sys

import pytest

from dbr.core.testing.processes import process_alive, wait_until


def test_process_alive_tells_a_running_child_from_a_zombie_and_a_reaped_one():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    assert process_alive(child.pid)
    assert process_alive(os.getpid())
    child.stdin.close()
    # Exited but not yet reaped: a zombie, which no longer runs.
    wait_until(lambda: not process_alive(child.pid), 30, "the child's exit")
    child.wait()
    assert not process_alive(child.pid)


def test_wait_until_returns_once_the_condition_holds():
    calls = []
    wait_until(lambda: calls.append(None) or len(calls) == 3, 5, "the third call")
    assert len(calls) == 3


def test_wait_until_fails_the_test_naming_what_it_awaited():
    with pytest.raises(pytest.fail.Exception, match=r"the impossible: not after 0.05 s"):
        wait_until(lambda: False, 0.05, "the impossible")
