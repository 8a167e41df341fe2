import os
import platform
import subprocess
import sys

import pytest

from dbr.core import memory


def _glibc_version():
    library, version = platform.libc_ver()
    return tuple(int(part) for part in version.split(".")[:2]) if library == "glibc" else ()


glibc_only = pytest.mark.skipif(
    _glibc_version() < (2, 33), reason="glibc 2.33 or later is needed (mallopt, mallinfo2)"
)

# Runs ``action`` after importing dbr.core, then allocates one 24 MiB block and
# prints whether glibc mapped it for itself (mallinfo2's hblkhd grew by its
# size): with glibc's defaults it is (its threshold starts at 128 KiB and only
# rises when a mapped block is freed), with keep_freed_memory it comes from the
# heap. Only one block is probed: freeing it raises glibc's own threshold.
_LARGE_BLOCK_IS_MAPPED = """
import ctypes
import numpy
import dbr.core
from dbr.core import memory

{action}

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    )]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Mallinfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
size = 24 << 20
before = libc.mallinfo2().hblkhd
block = libc.malloc(size)
print(libc.mallinfo2().hblkhd - before >= size)
libc.free(block)
"""

# Imports dbr.core, runs ``action``, then "iterations" that each make four
# 8 MiB arrays, write them and free them all, and prints the page faults of the
# last iteration. With glibc's defaults the 32 MiB freed at the top of the heap
# exceed its trim threshold (twice the largest freed block) and go back to the
# system each time.
_FAULTS_OF_AN_ITERATION = """
import resource
import numpy
import dbr.core
from dbr.core import memory

{action}

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

_KEEP = "memory.keep_freed_memory()"


def _last_line(script, setting, action=""):
    """The last line ``script`` prints in a fresh interpreter with the variable at ``setting``."""
    env = dict(os.environ)
    env.pop(memory.ENVIRONMENT_VARIABLE, None)
    if setting is not None:
        env[memory.ENVIRONMENT_VARIABLE] = setting
    out = subprocess.run(
        [sys.executable, "-c", script.format(action=action)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().splitlines()[-1]


def _mapped(setting, action=""):
    return _last_line(_LARGE_BLOCK_IS_MAPPED, setting, action) == "True"


def _faults(setting, action=""):
    return int(_last_line(_FAULTS_OF_AN_ITERATION, setting, action))


@glibc_only
@pytest.mark.parametrize("setting", [None, "", "0"])
def test_import_leaves_glibcs_settings_alone(setting):
    assert _mapped(setting)


@glibc_only
def test_the_variable_at_1_applies_the_setting_at_import():
    assert not _mapped("1")


@glibc_only
def test_keep_freed_memory_applies_the_setting_when_called():
    assert not _mapped(None, f"assert {_KEEP}")


@glibc_only
def test_the_variable_at_0_forbids_the_setting_everywhere():
    assert _mapped("0", f"assert not {_KEEP}")


@glibc_only
def test_freed_array_memory_is_reused_without_page_faults():
    # 32 MiB is 8,192 pages, faulted in again in each iteration when glibc returns them.
    assert _faults(None, _KEEP) < 100
    assert _faults("1") < 100
    # glibc returns part of them (about 2,500 pages here): what the setting avoids.
    assert _faults(None) > 1000
    assert _faults("0", _KEEP) > 1000


def test_a_bad_setting_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, "yes")
    with pytest.raises(ValueError, match="DBR_KEEP_FREED_MEMORY: expected 0 or 1, got 'yes'"):
        memory.keeps_freed_memory_by_default()
    with pytest.raises(ValueError, match="DBR_KEEP_FREED_MEMORY: expected 0 or 1, got 'yes'"):
        memory.keep_freed_memory()


@pytest.mark.parametrize(
    "setting, expected", [(None, False), ("", False), (" 1 ", True), (" 0 ", False)]
)
def test_only_the_variable_at_1_applies_it_at_import(monkeypatch, setting, expected):
    if setting is None:
        monkeypatch.delenv(memory.ENVIRONMENT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, setting)
    assert memory.keeps_freed_memory_by_default() is expected
