"""The README's main job: the digits CNN's command, its default accuracy, and resuming a run."""

import json
import pathlib
import subprocess
import sys
import time

import numpy
import pytest
from conftest import load_example

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "digits" / "train_digits_cnn.py"

pytest.importorskip("sklearn", reason="get_digits needs dbr-datasets[sklearn]")
pytest.importorskip("matplotlib", reason="PlotReport needs dbr-training[plot]")


def _log_without_time(out):
    entries = json.loads((out / "log").read_text())
    for entry in entries:
        del entry["elapsed_time"]
    return entries


def test_the_command_with_one_epoch_writes_log_plots_and_snapshots(tmp_path):
    out = tmp_path / "result"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--epoch", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    for name in ("log", "loss.png", "accuracy.png", "snapshot_epoch_1", "model.npz"):
        assert (out / name).is_file(), name
    assert (out / "loss.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "validation/main/accuracy" in completed.stdout
    assert f"test accuracy of the model reloaded from {out / 'model.npz'}" in completed.stdout
    assert len(_log_without_time(out)) == 1


def test_the_default_run_reaches_97_percent_on_the_digits_test_split(tmp_path, report_figure):
    example = load_example("digits/train_digits_cnn.py")
    start = time.perf_counter()
    accuracy = example.main(["--out", str(tmp_path)])
    report_figure("digits CNN test accuracy, default run (20 epochs)", accuracy)
    report_figure("digits CNN default run, seconds", round(time.perf_counter() - start, 1))
    assert accuracy >= 0.97


def test_a_resumed_run_repeats_the_uninterrupted_run(tmp_path):
    example = load_example("digits/train_digits_cnn.py")
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    common = ["--test", "--epoch", "2", "--seed", "3"]
    example.main([*common, "--out", str(whole)])
    # Another seed: everything random must come from the snapshot, not from the seed.
    example.main(
        [*common[:-1], "4", "--out", str(resumed), "--resume", str(whole / "snapshot_epoch_1")]
    )

    assert _log_without_time(resumed) == _log_without_time(whole)
    with numpy.load(whole / "model.npz") as expected, numpy.load(resumed / "model.npz") as got:
        assert sorted(got.files) == sorted(expected.files)
        for key in expected.files:
            numpy.testing.assert_array_equal(got[key], expected[key], err_msg=key)
