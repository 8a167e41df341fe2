"""tools/gpu-check's pieces that need no GPU: the outcome-recording pytest plugin, its
rerun filter, and the runner's reading of outcomes, sharing of workers and summary."""

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"

SAMPLE_TESTS = textwrap.dedent(
    """
    import pytest

    @pytest.mark.parametrize("i", range(5))
    def test_same_message(i):
        raise RuntimeError("always the same")

    def test_other():
        raise ValueError("another message")

    def test_skipped():
        pytest.skip("no second GPU")

    def test_passes():
        pass
    """
)


def run_sample(tmp_path, run, suite="sample", **env):
    """pytest on the sample tests with the plugin, its files named after ``run``;
    returns (outcome lines, failures text)."""
    (tmp_path / "test_sample.py").write_text(SAMPLE_TESTS)
    outcomes = tmp_path / f"{run}-outcomes.tsv"
    failures = tmp_path / f"{run}-failures.txt"
    variables = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(TOOLS), os.environ.get("PYTHONPATH", "")]),
        GPU_CHECK_SUITE=suite,
        GPU_CHECK_OUTCOMES=str(outcomes),
        GPU_CHECK_FAILURES=str(failures),
        **env,
    )
    variables.pop("PYTEST_XDIST_WORKER", None)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "gpu_check_plugin", "-p", "no:cacheprovider"]
        + ["test_sample.py"],
        cwd=tmp_path,
        env=variables,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = outcomes.read_text().splitlines() if outcomes.exists() else []
    return [line.split("\t") for line in lines], failures.read_text() if failures.exists() else ""


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLS))
    yield importlib.import_module("gpu_check_run")
    sys.modules.pop("gpu_check_run", None)


def test_plugin_records_every_outcome_with_skip_reasons(tmp_path):
    lines, failures = run_sample(tmp_path, "only")
    assert lines[0] == ["sample", "collected", "0", "8"]
    outcomes = {fields[3]: fields[1] for fields in lines[1:]}
    assert outcomes == {
        **{f"test_sample.py::test_same_message[{i}]": "failed" for i in range(5)},
        "test_sample.py::test_other": "failed",
        "test_sample.py::test_skipped": "skipped",
        "test_sample.py::test_passes": "passed",
    }
    skip = next(fields for fields in lines if fields[1] == "skipped")
    assert skip[4] == "no second GPU"
    assert failures.count("=== sample failed (call): test_sample.py::test_same_message") == 5
    # The same message reported in full three times, then alone.
    assert failures.count("(as above) RuntimeError: always the same") == 2
    assert "ValueError: another message" in failures


def test_rerun_runs_only_what_did_not_pass_or_skip(tmp_path):
    run_sample(tmp_path, "first")
    previous = tmp_path / "first-outcomes.tsv"
    lines, _ = run_sample(tmp_path, "second", GPU_CHECK_RERUN=str(previous))
    assert lines[0] == ["sample", "collected", "0", "6"]
    assert {fields[3] for fields in lines[1:]} == {
        *(f"test_sample.py::test_same_message[{i}]" for i in range(5)),
        "test_sample.py::test_other",
    }
    lines, _ = run_sample(
        tmp_path, "third", GPU_CHECK_RERUN=str(previous), GPU_CHECK_RERUN_SKIPPED="1"
    )
    assert lines[0] == ["sample", "collected", "0", "7"]
    # Another suite's outcomes settle nothing here.
    lines, _ = run_sample(tmp_path, "fourth", suite="other", GPU_CHECK_RERUN=str(previous))
    assert lines[0] == ["other", "collected", "0", "8"]


def test_read_outcomes_keeps_the_worst_phase_and_ignores_cut_lines(tmp_path, runner):
    path = tmp_path / "outcomes.tsv"
    path.write_text(
        "a\tcollected\t0\t3\n"
        "a\tpassed\t0.1\tt.py::x\n"
        "a\terror\t0.0\tt.py::x\n"
        "a\tskipped\t0.0\tt.py::y\tneeds two GPUs\n"
        "b\tpassed\t0.2\tt.py::z\n"
        "a\tfail"
    )
    outcomes, collected, reasons = runner.read_outcomes(path)
    assert outcomes == {
        "a": {"t.py::x": "error", "t.py::y": "skipped"},
        "b": {"t.py::z": "passed"},
    }
    assert collected == {"a": 3}
    assert reasons["a"] == {"needs two GPUs": 1}


def test_summary_counts_the_tests_never_reached(tmp_path, runner):
    path = tmp_path / "outcomes.tsv"
    path.write_text(
        "a\tcollected\t0\t3\na\tpassed\t0.1\tt.py::x\nb\tcollected\t0\t1\nb\tpassed\t0.1\tt.py::z\n"
    )
    text, ok = runner.summarise(tmp_path, path, ["a", "b"], {"a": 0, "b": 0}, [], ["info"])
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:3]}
    assert rows["a"] == ["3", "1", "0", "0", "0", "2", "0"]
    assert rows["b"] == ["1", "1", "0", "0", "0", "0", "0"]
    assert "info" in text and text.endswith("RESULT: FAILED\n") and not ok
    assert (tmp_path / "summary.txt").read_text() == text


def test_workers_are_shared_in_proportion_with_one_at_least(runner):
    shares = runner.share_workers(
        ["big", "small", "tiny"], 16, {"big": 900, "small": 90, "tiny": 1}
    )
    assert shares == {"big": 15, "small": 1, "tiny": 1}
