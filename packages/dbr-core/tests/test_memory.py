import os
import subprocess
import sys

import pytest

from dbr.core import memory

# Imports dbr.core, then runs "iterations" that each make four 8 MiB arrays, write
# them and free them all, and prints the page faults of the last iteration. With
# glibc's defaults the 32 MiB freed at the top of the heap exceed its trim
# threshold (twice the largest freed block) and go back to the system each time.
_FAULTS_OF_AN_ITERATION = """
import resource
import numpy
import dbr.core

def iteration():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [numpy.empty(2 << 20, numpy.float32) for _ in range(4)]
    for a in arrays:
        a.fill(1.0)
    del arrays
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

for _ in range(3):
    iteration()
print(iteration())
"""


def _faults(setting):
    env = dict(os.environ)
    env.pop(memory.ENVIRONMENT_VARIABLE, None)
    if setting is not None:
        env[memory.ENVIRONMENT_VARIABLE] = setting
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS_OF_AN_ITERATION],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not memory.keep_freed_memory(),
    reason="glibc's mallopt is needed (Linux with glibc)",
)
def test_freed_array_memory_is_reused_without_page_faults():
    # 32 MiB is 8,192 pages, faulted in again in each iteration when glibc returns them.
    assert _faults(None) < 100
    assert _faults("") < 100
    assert _faults("1") < 100
    # glibc returns part of them (about 2,500 pages here): what the setting avoids.
    assert _faults("0") > 1000


def test_a_bad_setting_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, "yes")
    with pytest.raises(ValueError, match="DBR_KEEP_FREED_MEMORY: expected 0 or 1, got 'yes'"):
        memory.keeps_freed_memory_by_default()


@pytest.mark.parametrize(
    "setting, expected", [(None, True), ("", True), ("1", True), (" 0 ", False)]
)
def test_the_default_follows_the_variable(monkeypatch, setting, expected):
    if setting is None:
        monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, setting)
    assert memory.keeps_freed_memory_by_default() is expected
