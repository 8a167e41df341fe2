"""Smoke test of examples/mnist/train_mnist_multi_node.py under ``mpiexec -n 2``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mnist" / "train_mnist_multi_node.py"


def test_train_mnist_multi_node_smoke_on_two_processes(mnist, tmp_path):
    pytest.importorskip("mpi4py", reason="dbr-distributed is not installed")
    bindir = str(Path(sys.executable).parent)
    mpiexec = shutil.which("mpiexec", path=os.pathsep.join([bindir, os.environ["PATH"]]))
    if mpiexec is None:
        pytest.skip("needs mpiexec: pip install 'dbr-distributed[mpich]'")
    command = [mpiexec, "-n", "2", sys.executable, str(EXAMPLE)]
    command += ["--test", "--epoch", "1", "--unit", "50", "--out", str(tmp_path)]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "# processes: 2" in result.stdout
    assert "test accuracy:" in result.stdout
