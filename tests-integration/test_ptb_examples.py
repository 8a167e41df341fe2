"""The PTB language model example and its text generator, on the real Penn Treebank.

A full epoch of the 2-layer, 200-unit model over the training text (929,589
tokens with the ``<eos>`` marks: 1,328 updates of 20 x 35 words) does not fit
a test: its output layer over the 10,000-word vocabulary costs about 12 MFLOP
per word forward and backward, and the epoch took 576 s on this 2-core
machine (validation perplexity 189.7, test 187.0, measured by hand). The
bounded test trains one epoch over the first ``TRAIN_WORDS`` words instead
(250 updates, a fifth of the text, about four minutes) and holds the
perplexity on the whole validation text under ``FRACTION_BOUND``: measured
524 with seed 0, where the unigram model of the training text scores 685, so
the bound says that the LSTM has learned more than word frequencies.
"""

import json
import math

import pytest
from conftest import load_example, require_files

TRAIN_WORDS = 175_000
FRACTION_BOUND = 600.0


@pytest.fixture(scope="module")
def ptb_files(shared_dataset_root):
    require_files(
        shared_dataset_root, "ptb/ptb.train.txt", "ptb/ptb.valid.txt", "ptb/ptb.test.txt"
    )
    return shared_dataset_root


def test_train_ptb_smoke_then_gentxt_samples_vocabulary_words(ptb_files, tmp_path, capfd):
    train_ptb = load_example("ptb/train_ptb.py")
    test_perplexity = train_ptb.main(["--test", "--epoch", "14", "--out", str(tmp_path)])
    # Fourteen epochs of 100 words are two updates: barely trained, yet a finite
    # perplexity no larger than a few times the vocabulary size.
    assert math.isfinite(test_perplexity) and 1 < test_perplexity < 50_000
    log = json.loads((tmp_path / "log").read_text())
    assert log and all(math.isfinite(entry["perplexity"]) for entry in log)
    assert "val_perplexity" in log[-1]
    assert (tmp_path / "snapshot_iter_2").is_file()
    vocabulary = json.loads((tmp_path / "vocab.json").read_text())
    assert len(vocabulary) == 10_000

    gentxt = load_example("ptb/gentxt.py")
    capfd.readouterr()
    words = gentxt.main(
        ["--model", str(tmp_path / "rnnlm.npz"), "--primetext", "the market", "--length", "12"]
    )
    assert len(words) == 12 and set(words) <= set(vocabulary)
    printed = capfd.readouterr().out.split()
    assert printed == ["the", "market", *words]
    argmax = gentxt.main(
        ["--model", str(tmp_path / "rnnlm.npz"), "--length", "5", "--sample", "0"]
    )
    assert len(argmax) == 5 and set(argmax) <= set(vocabulary)


def test_train_ptb_resumes_from_its_snapshot(ptb_files, tmp_path):
    train_ptb = load_example("ptb/train_ptb.py")
    train_ptb.main(["--test", "--epoch", "7", "--out", str(tmp_path)])
    resume = ["--resume", str(tmp_path / "snapshot_iter_1")]
    train_ptb.main(["--test", "--epoch", "14", "--out", str(tmp_path), *resume])
    log = json.loads((tmp_path / "log").read_text())
    assert [entry["iteration"] for entry in log] == [1, 2]


def test_ptb_lstm_200_units_perplexity_after_one_epoch_over_a_fraction(
    ptb_files, tmp_path, report_figure
):
    train_ptb = load_example("ptb/train_ptb.py")
    options = ["--unit", "200", "--layers", "2", "--dropout", "0", "--epoch", "1"]
    test_perplexity = train_ptb.main(
        [*options, "--train-words", str(TRAIN_WORDS), "--out", str(tmp_path)]
    )
    log = json.loads((tmp_path / "log").read_text())
    val_perplexity = log[-1]["val_perplexity"]
    report_figure(
        f"PTB 2x200 LSTM, 1 epoch over {TRAIN_WORDS} words: val perplexity", float(val_perplexity)
    )
    report_figure(
        f"PTB 2x200 LSTM, 1 epoch over {TRAIN_WORDS} words: test perplexity",
        float(test_perplexity),
    )
    report_figure("PTB 2x200 LSTM: seconds for that epoch", float(log[-1]["elapsed_time"]))
    assert val_perplexity < FRACTION_BOUND
