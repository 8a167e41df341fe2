"""Chainer scripts run on dbr after the README's migration and nothing else.

The scripts in ``chainer_scripts/`` are Chainer v7 code (``import chainer``,
``import chainer.functions as F``, ``from chainer.training import
extensions``, ...), in the style of Chainer's MNIST, PTB and VAE examples.
Each test migrates one of them (``python -m dbr.chainer.migrate``, or the
README's older ``sed`` line) and runs the result on the CPU with ``--device -1``.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "chainer_scripts"
MIGRATION = (
    r"s/\bchainer\b/dbr.chainer/g; "
    r"s/\b(chainerx|chainermn|onnx_chainer)\b/dbr.chainer.\1/g"
)


def port(name, out_dir, how="migrate"):
    """Copy chainer_scripts/<name> to out_dir, migrated ``how`` (migrate, sed); return its path."""
    source = (SCRIPTS / name).read_text()
    assert re.search(r"^import chainer$", source, re.MULTILINE)
    assert "dbr" not in source
    path = out_dir / name
    if how == "migrate":
        path.write_text(source)
        command = [sys.executable, "-m", "dbr.chainer.migrate", str(path)]
        subprocess.run(command, capture_output=True, text=True, check=True)
        ported = path.read_text()
        assert "import dbr.chainer as chainer\n" in ported
        assert not re.search(r"^(import|from) chainer\b", ported, re.MULTILINE)
        return path
    sed = shutil.which("sed")
    assert sed is not None, "the migration is a sed command; this test needs sed"
    ported = subprocess.run(
        [sed, "-E", MIGRATION], input=source, capture_output=True, text=True, check=True
    ).stdout
    assert "import dbr.chainer\n" in ported
    assert not re.search(r"(?<!dbr\.)\bchainer\b", ported)
    path.write_text(ported)
    return path


def run(path, *args):
    """Run the ported script in its folder; return its stdout, failing with its stderr."""
    result = subprocess.run(
        [sys.executable, str(path), *args],
        cwd=path.parent, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def number(pattern, text):
    match = re.search(pattern + r"\s*([-+0-9.eE]+)", text)
    assert match, f"{pattern!r} not in the output:\n{text}"
    return float(match.group(1))


@pytest.mark.parametrize("how", ["migrate", "sed"])
def test_mlp_with_trainer(tmp_path, how):
    path = port("train_mlp.py", tmp_path, how)
    out = run(path, "--device", "-1", "--epoch", "3", "--out", "result")
    assert "Device: @numpy" in out
    assert "validation/main/accuracy" in out
    assert number("final accuracy:", out) > 0.9
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert [entry["epoch"] for entry in log] == [1, 2, 3]
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert (tmp_path / "result" / "mlp.npz").is_file()
    assert (tmp_path / "result" / "snapshot_iter_60").is_file()


def test_lstm_language_model_with_bptt_updater(tmp_path):
    path = port("train_lm.py", tmp_path)
    out = run(path, "--device", "-1", "--epoch", "4", "--out", "result")
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert len(log) == 4
    assert log[-1]["perplexity"] < log[0]["perplexity"]
    # 12 words repeating in a fixed order: a model that learnt the order is nearly certain.
    assert number("test perplexity:", out) < 2.0


def test_vae_custom_loop(tmp_path):
    path = port("train_vae.py", tmp_path)
    out = run(path, "--device", "-1", "--epoch", "30")
    before = number("loss before:", out)
    after = number("loss after:", out)
    assert after < 0.6 * before
    assert (tmp_path / "vae.npz").is_file()


@pytest.mark.parametrize("name", ["train_mlp.py", "train_lm.py", "train_vae.py"])
def test_scripts_are_chainer_code(name):
    """The unported scripts name only chainer: the migration, not the scripts, makes them dbr."""
    source = (SCRIPTS / name).read_text()
    assert "import chainer.functions as F" in source or "chainer.functions" in source
    assert "chainer.get_device(args.device)" in source
