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
