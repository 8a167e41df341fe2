"""Resuming from a snapshot after kill -9 reproduces the uninterrupted run bit for bit.

Run 1 trains N iterations in a subprocess. Run 2 is the same script, killed
with SIGKILL while it writes the snapshot of iteration 40 (after the one of
iteration 30 is complete); run 3 resumes from the newest complete snapshot
(``autoload``) and finishes. The final parameters, optimizer state (``t``,
Adam's moments), iterator state and the ``log`` file (less
``elapsed_time``) must equal run 1's exactly.

The shuffling order sampler draws each epoch's permutation from a seeded
``numpy.random.RandomState``, which the iterator's snapshot carries, so the
resumed run draws the same permutations after the next epoch boundary.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

N_ITERATIONS = 60
SNAPSHOT_EVERY = 10
HANG_AT = 40

SCRIPT = (
    textwrap.dedent(
        """
    import os
    import sys
    import time

    import numpy as np

    from dbr.core import Chain, Parameter, ops, report
    from dbr.core.serializers import save_npz
    from dbr.datasets import SerialIterator, ShuffleOrderSampler
    from dbr.training.extension import Extension
    from dbr.training.extensions._snapshot import snapshot
    from dbr.training.extensions.log_report import LogReport
    from dbr.training.optimizers.adam import Adam
    from dbr.training.trainer import Trainer
    from dbr.training.updaters.standard_updater import StandardUpdater

    out, hang_at = sys.argv[1], int(sys.argv[2])


    class Regression(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.W = Parameter(np.array([[0.5], [-0.25], [0.125]]))
                self.b = Parameter(np.zeros(1))

        def forward(self, x, t):
            y = ops.matmul(x, self.W) + ops.broadcast_to(self.b, t.shape)
            loss = ops.sum((y - t) ** 2) / len(x)
            report({"loss": loss}, self)
            return loss


    class StartRecorder(Extension):
        # Initialized after the snapshot (lower priority), so it sees the loaded iteration.
        trigger = None
        priority = -200

        def __call__(self, trainer):
            pass

        def initialize(self, trainer):
            with open(os.path.join(out, "started_at"), "a") as f:
                f.write(f"{trainer.updater.iteration}\\n")


    def savefun(path, target):
        if os.path.basename(path) == f"snapshot_iter_{hang_at}":
            with open(path, "wb") as f:
                f.write(b"PK\\x03\\x04 half of a snapshot")
                f.flush()
            open(os.path.join(out, "writing"), "w").close()
            time.sleep(60)
        save_npz(path, target)


    data_rng = np.random.RandomState(0)
    xs = data_rng.normal(size=(23, 3))
    ts = xs @ np.array([[1.0], [2.0], [-1.0]]) + 0.1 * data_rng.normal(size=(23, 1))
    dataset = list(zip(xs, ts))
    sampler = ShuffleOrderSampler(np.random.RandomState(1234))
    iterator = SerialIterator(dataset, 5, order_sampler=sampler)
    model = Regression()
    optimizer = Adam(alpha=0.05).setup(model)
    updater = StandardUpdater(iterator, optimizer)
    trainer = Trainer(updater, (__N__, "iteration"), out=out)
    trainer.extend(LogReport(trigger=(5, "iteration")))
    trainer.extend(StartRecorder())
    trainer.extend(
        snapshot(savefun=savefun, autoload=True), trigger=(__K__, "iteration")
    )
    trainer.run()
    save_npz(os.path.join(out, "final.npz"), trainer)
    """
    )
    .replace("__N__", str(N_ITERATIONS))
    .replace("__K__", str(SNAPSHOT_EVERY))
)


def run_script(script, out, hang_at):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.Popen(
        [sys.executable, "-W", "error", str(script), str(out), str(hang_at)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def finish(process, timeout=60):
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output.decode()


def wait_for(path, process, timeout=30):
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the run exited early:\n{process.stdout.read().decode()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"{path} did not appear within {timeout} s")
        time.sleep(0.02)


def final_state(out):
    with np.load(out / "final.npz", allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files if key.startswith("updater/")}


def log_without_elapsed_time(out):
    entries = json.loads((out / "log").read_text())
    for entry in entries:
        entry.pop("elapsed_time")
    return entries


def assert_same_run(expected_out, actual_out):
    expected, actual = final_state(expected_out), final_state(actual_out)
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        assert actual[key].dtype == value.dtype, key
        assert actual[key].tobytes() == value.tobytes(), key
    assert log_without_elapsed_time(actual_out) == log_without_elapsed_time(expected_out)


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("script") / "train.py"
    path.write_text(SCRIPT)
    return path


def test_resume_after_kill_during_snapshot_write(tmp_path, script):
    uninterrupted = tmp_path / "uninterrupted"
    interrupted = tmp_path / "interrupted"
    run1 = run_script(script, uninterrupted, hang_at=-1)
    run2 = run_script(script, interrupted, hang_at=HANG_AT)
    finish(run1)

    wait_for(interrupted / "writing", run2)
    run2.send_signal(signal.SIGKILL)
    run2.communicate(timeout=30)
    assert run2.returncode == -signal.SIGKILL

    names = sorted(os.listdir(interrupted))
    assert "snapshot_iter_30" in names and "snapshot_iter_40" not in names
    (partial,) = [n for n in names if n.startswith("tmpsnapshot_iter_40")]
    assert os.listdir(interrupted / partial) == ["snapshot_iter_40"]
    os.remove(interrupted / "writing")

    # The resumed run must load snapshot_iter_30: its state says iteration 30.
    with np.load(interrupted / "snapshot_iter_30", allow_pickle=False) as npz:
        assert int(npz["updater/iteration"]) == 30
        assert int(npz["updater/optimizer:main/t"]) == 30

    finish(run_script(script, interrupted, hang_at=-1))
    # The resumed run's first snapshot removed the killed run's temporary directory.
    assert partial not in os.listdir(interrupted)
    assert (uninterrupted / "started_at").read_text() == "0\n"
    assert (interrupted / "started_at").read_text() == "0\n30\n"
    assert_same_run(uninterrupted, interrupted)
    for it in range(SNAPSHOT_EVERY, N_ITERATIONS + 1, SNAPSHOT_EVERY):
        assert (interrupted / f"snapshot_iter_{it}").is_file()
    log = log_without_elapsed_time(interrupted)
    assert [e["iteration"] for e in log] == list(range(5, N_ITERATIONS + 1, 5))
    state = final_state(interrupted)
    assert int(state["updater/optimizer:main/t"]) == N_ITERATIONS
