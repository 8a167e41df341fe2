"""The README's main job, shortened: the digits MLP trains, snapshots and reloads."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "digits" / "train_digits_mlp.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("train_digits_mlp", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_mlp_learns_and_reloads_from_its_snapshot(tmp_path, capfd):
    pytest.importorskip("sklearn", reason="get_digits needs dbr-datasets[sklearn]")
    example = _load_example()
    accuracy = example.main(["--epoch", "3", "--out", str(tmp_path)])
    out = capfd.readouterr().out
    # Ten classes: chance is 0.1; three epochs of Adam reach far above it.
    assert accuracy > 0.8
    assert (tmp_path / "log").exists() and (tmp_path / "model_final").exists()
    assert "validation/main/accuracy" in out
    assert f"test accuracy of the model reloaded from {tmp_path}/model_final" in out
