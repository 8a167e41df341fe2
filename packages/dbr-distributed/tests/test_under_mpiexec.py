"""Run the per-rank check scripts in tests/ranks under ``mpiexec -n N``, each with a time limit.

A script asserts on every rank; an assertion (any uncaught exception) ends
the whole job through the package's MPI-abort hook, so a failure is a
non-zero exit, and a deadlock is the subprocess timeout.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

RANKS = Path(__file__).parent / "ranks"
LIMIT_S = 90


def _mpiexec():
    found = shutil.which(
        "mpiexec",
        path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    if found is None:
        pytest.skip(
            "needs mpiexec: pip install 'dbr-distributed[mpich]' (or an MPI of the system)"
        )
    return found


def run_ranks(script, n, *args, limit=LIMIT_S, env=None):
    """``mpiexec -n n python ranks/<script> *args``; the completed process."""
    environment = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **(env or {}))
    return subprocess.run(
        [_mpiexec(), "-n", str(n), sys.executable, str(RANKS / script), *args],
        capture_output=True,
        text=True,
        timeout=limit,
        env=environment,
        check=False,
    )


def assert_ok(result):
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    assert_ok(run_ranks("collectives.py", n))


@pytest.mark.parametrize("name", ["naive", "flat"])
@pytest.mark.parametrize("n", [2, 3])
def test_data_parallel_training_equals_one_process(n, name):
    assert_ok(run_ranks("equivalence.py", n, name))


@pytest.mark.parametrize("n", [2, 3])
def test_scatter_dataset_and_evaluator(n):
    assert_ok(run_ranks("scatter_evaluate.py", n))


def test_a_rank_that_raises_ends_the_job_within_seconds():
    start = time.monotonic()
    result = run_ranks("abort.py", 2, limit=30)
    elapsed = time.monotonic() - start
    assert result.returncode != 0
    assert "uncaught exception on rank 1" in result.stderr
    assert elapsed < 20, elapsed


def test_the_abort_hook_can_be_switched_off():
    result = run_ranks(
        "abort.py", 2, "--expect-no-hook", env={"DBR_DISTRIBUTED_ABORT_ON_EXCEPTION": "0"}
    )
    assert_ok(result)


@pytest.mark.parametrize("n", [2, 3])
def test_multi_node_batch_normalization_equals_global_batch_normalization(n):
    assert_ok(run_ranks("mnbn.py", n))


@pytest.mark.parametrize("n", [2, 3])
def test_model_parallel_functions_and_multi_node_chain_list(n):
    assert_ok(run_ranks("model_parallel.py", n))


@pytest.mark.parametrize("n", [2, 3])
def test_multi_node_and_synchronized_iterators(n):
    assert_ok(run_ranks("iterators.py", n))


@pytest.mark.parametrize("n", [2, 3])
def test_generic_evaluator_allreduce_persistent_and_multi_node_snapshot(n, tmp_path):
    assert_ok(run_ranks("extensions.py", n, "checks", str(tmp_path)))


def test_checkpointer_resumes_after_a_rank_is_killed_and_the_job_restarted(tmp_path):
    import numpy as np

    full, crashed = tmp_path / "full", tmp_path / "crashed"
    full.mkdir()
    crashed.mkdir()
    assert_ok(run_ranks("extensions.py", 2, "checkpoint", str(full), "full"))
    died = run_ranks("extensions.py", 2, "checkpoint", str(crashed), "crash", limit=60)
    assert died.returncode != 0, died.stderr
    # rank 1 died during iteration 7 before its checkpoint; rank 0 may have written 7
    assert {"run.0.6", "run.1.6"} <= set(os.listdir(crashed)) and "run.1.7" not in os.listdir(
        crashed
    )
    assert_ok(run_ranks("extensions.py", 2, "checkpoint", str(crashed), "resume"))
    assert not [name for name in os.listdir(crashed) if name.startswith("run.")]
    for rank in range(2):
        reference = np.load(full / f"full.{rank}.npz")
        resumed = np.load(crashed / f"resume.{rank}.npz")
        assert int(reference["start"]) == 0 and int(resumed["start"]) == 6
        for key in set(reference.files) - {"start"}:
            np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
