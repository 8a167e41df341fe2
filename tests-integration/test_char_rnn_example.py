"""The character-level LSTM example on the real Tiny Shakespeare text."""

import math

import pytest
from conftest import load_example, require_files


def test_char_rnn_smoke_samples_text_of_the_requested_length(shared_dataset_root, tmp_path):
    require_files(shared_dataset_root, "tinyshakespeare/input.txt")
    text_path = shared_dataset_root / "tinyshakespeare" / "input.txt"
    example = load_example("char_rnn/train_char_rnn.py")
    val_perplexity = example.main(
        ["--test", "--text", str(text_path), "--length", "80", "--out", str(tmp_path)]
    )
    # Tiny Shakespeare has 65 distinct characters; even a few updates do better than uniform.
    assert math.isfinite(val_perplexity) and 1 < val_perplexity < 65
    sample = (tmp_path / "sample.txt").read_text(encoding="utf-8")
    assert len(sample) == 80
    assert set(sample) <= set(text_path.read_text(encoding="utf-8"))
    assert (tmp_path / "char_rnn.npz").is_file() and (tmp_path / "log").is_file()


def test_char_rnn_names_the_missing_text(tmp_path, capsys):
    example = load_example("char_rnn/train_char_rnn.py")
    missing = tmp_path / "absent.txt"
    with pytest.raises(SystemExit):
        example.main(["--text", str(missing), "--out", str(tmp_path)])
    assert str(missing) in capsys.readouterr().err
