"""tools/wheels.py: nox runs side by side in one checkout never remove each other's wheels.

Each nox run builds into a folder of its own under ``.nox/_wheels`` and removes
it when it ends; a run that starts removes only the folders of runs that are
gone. Before, every run emptied ``.nox/_wheels``, so a ``nox -s build`` started
beside a running ``nox`` made that run's later sessions fail with
"Distribution not found" (issue 38).
"""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEEL = "dbr_core-0.0.0-py3-none-any.whl"

# A nox run in miniature: take this run's folder, build a "wheel" into it, say
# where, and keep running until a line arrives on stdin.
RUN = textwrap.dedent(
    f"""
    import sys
    from pathlib import Path

    sys.path.insert(0, sys.argv[1])
    import wheels

    own = wheels.own_folder(Path(sys.argv[2]))
    (own / {WHEEL!r}).write_text("wheel")
    print(own, flush=True)
    sys.stdin.readline()
    """
)


def start_run(base):
    """A running process that has built into its folder under base; (process, folder)."""
    process = subprocess.Popen(
        [sys.executable, "-c", RUN, str(ROOT / "tools"), str(base)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, Path(process.stdout.readline().strip())


def finish(process):
    process.communicate("\n", timeout=60)
    assert process.returncode == 0


def test_runs_side_by_side_keep_their_wheels_and_each_removes_its_own_at_exit(tmp_path):
    base = tmp_path / "_wheels"
    first, first_dir = start_run(base)
    second, second_dir = start_run(base)
    assert first_dir != second_dir
    assert first_dir.parent == second_dir.parent == base
    assert (first_dir / WHEEL).is_file(), "the second run's start removed the first run's wheel"
    assert (second_dir / WHEEL).is_file()
    finish(second)
    assert not second_dir.exists()
    assert (first_dir / WHEEL).is_file(), "the second run's end removed the first run's wheel"
    finish(first)
    assert not first_dir.exists()


def test_the_folder_of_a_run_that_died_is_removed_by_the_next_run(tmp_path):
    base = tmp_path / "_wheels"
    died, died_dir = start_run(base)
    died.kill()
    died.communicate(timeout=60)
    assert (died_dir / WHEEL).is_file()  # killed: nothing ran at its exit
    (base / "leftover").mkdir()  # not a run's folder at all (the layout before runs had one)
    run, run_dir = start_run(base)
    assert not died_dir.exists()
    assert not (base / "leftover").exists()
    assert (run_dir / WHEEL).is_file()
    finish(run)
