"""Run the per-rank check scripts in tests/ranks under ``mpiexec -n N``, each with a time limit.

A script asserts on every rank; an assertion (any uncaught exception) ends
the whole job through the package's MPI-abort hook, so a failure is a
non-zero exit, and a deadlock is the time limit, after which every process
of the job is killed and the test fails.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

RANKS = Path(__file__).parent / "ranks"
LIMIT_S = 90
NO_HOOK = {"DBR_DISTRIBUTED_ABORT_ON_EXCEPTION": "0"}


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
    """``mpiexec -n n python ranks/<script> *args``; the completed process.

    Past ``limit`` seconds the whole job (mpiexec, its proxies and the ranks,
    one process group) is killed and the test fails as a hang.
    """
    environment = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **(env or {}))
    command = [_mpiexec(), "-n", str(n), sys.executable, str(RANKS / script), *args]
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(
                f"mpiexec -n {n} {script} {' '.join(args)} hung: killed after {limit} s\n"
                f"{stdout}\n{stderr}"
            )
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def assert_ok(result):
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("n", [2, 3])
def test_collectives(n):
    assert_ok(run_ranks("collectives.py", n))


@pytest.mark.parametrize("name", ["naive", "flat"])
@pytest.mark.parametrize("n", [2, 3])
def test_data_parallel_training_equals_one_process(n, name):
    assert_ok(run_ranks("equivalence.py", n, name))


def test_a_static_graph_model_trains_to_define_by_runs_bits():
    assert_ok(run_ranks("equivalence.py", 2, "naive", "--static"))


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
    result = run_ranks("abort.py", 2, "--expect-no-hook", env=NO_HOOK)
    assert_ok(result)


def test_a_rank_killed_by_sigkill_ends_the_job_instead_of_hanging():
    # MPICH's mpiexec ends the survivors itself (SIGKILL), before they can
    # print anything (see global_except_hook): the job must end, not hang.
    result = run_ranks("abort.py", 2, "--sigkill", limit=60)
    assert result.returncode != 0, result.stderr


@pytest.mark.parametrize("variant", ["transposed", "count", "dtype", "name"])
def test_ranks_whose_parameters_differ_raise_a_named_error_on_every_rank(variant):
    result = run_ranks("mismatch.py", 2, "layout", variant, limit=60, env=NO_HOOK)
    assert_ok(result)
    assert "message sizes do not match" not in result.stderr


@pytest.mark.parametrize("n", [2, 3])
def test_a_failed_object_collective_raises_the_same_error_on_every_rank(n):
    assert_ok(run_ranks("mismatch.py", n, "objects", limit=60, env=NO_HOOK))


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


def test_a_resumed_checkpointer_removes_the_checkpoints_it_supersedes(tmp_path):
    # cp_interval=2, gc_interval=5: no checkpoint is removed before rank 1 dies
    died = run_ranks("extensions.py", 2, "checkpoint", str(tmp_path), "crash", "2,5", limit=60)
    assert died.returncode != 0, died.stderr
    written = {f"run.{rank}.{i}" for rank in range(2) for i in range(1, 7)}
    assert written <= set(os.listdir(tmp_path))
    assert_ok(run_ranks("extensions.py", 2, "checkpoint", str(tmp_path), "resume", "2,5"))
    left = sorted(name for name in os.listdir(tmp_path) if name.startswith("run."))
    assert not left, left
