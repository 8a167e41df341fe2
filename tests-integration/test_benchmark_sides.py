"""The benchmarks time each framework in fresh processes of its own (``benchmarks/_timing.py``):
the dbr side opts into keeping freed memory, the PyTorch side runs without it and
without dbr's setting, and the parent prints the table of both.
"""

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

# A benchmark with one case per side whose workers log, per process, each call of
# keep_freed_memory and of the cases, and whether PyTorch is loaded.
_BENCHMARK = """
import json, os, sys
sys.path.insert(0, {benchmarks!r})
import _timing
from dbr.core import memory

def record(event):
    with open({log!r}, "a") as f:
        f.write(json.dumps([os.getpid(), event, "torch" in sys.modules]) + "\\n")

memory.keep_freed_memory = lambda: record("keep_freed_memory")
args = _timing.timing_parser("a benchmark", 2).parse_args()
_timing.compare_with_torch(
    args,
    "title",
    "case",
    lambda: {{"step": lambda: record("dbr step")}},
    lambda torch: {{"step": lambda: record("torch step")}},
)
"""

_FAKE_TORCH = """
__version__ = "0.0+fake"

def set_num_threads(n):
    pass

def get_num_threads():
    return 1
"""


def _run_benchmark(tmp_path, *args):
    """Run the benchmark above with a stand-in ``torch``; returns (stdout, {pid: events})."""
    log = tmp_path / "events.jsonl"
    script = tmp_path / "benchmark.py"
    script.write_text(_BENCHMARK.format(benchmarks=str(BENCHMARKS), log=str(log)))
    (tmp_path / "torch.py").write_text(_FAKE_TORCH)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    events = defaultdict(list)
    for line in log.read_text().splitlines():
        pid, event, torch_loaded = json.loads(line)
        events[pid].append((event, torch_loaded))
    return out.stdout, events


def test_each_side_runs_in_processes_of_its_own(tmp_path):
    stdout, events = _run_benchmark(tmp_path, "--runs", "2")
    dbr = [e for e in events.values() if ("dbr step", False) in e]
    torch = [e for e in events.values() if ("torch step", True) in e]
    assert len(dbr) == 2 and len(torch) == 2 and len(events) == 4
    for process in dbr:
        assert process[0] == ("keep_freed_memory", False)
        assert {event for event, _ in process[1:]} == {"dbr step"}
    for process in torch:
        assert {event for event, _ in process} == {"torch step"}
    assert "torch 0.0+fake, 1 thread(s)" in stdout
    assert "each side in its own processes, median of 2" in stdout
    assert stdout.splitlines()[-1].startswith("step")
