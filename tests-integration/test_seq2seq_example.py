"""The seq2seq example: its BLEU on hand-worked sentences, and a smoke test on PTB reversal."""

import math

import numpy
import pytest
from conftest import load_example, require_files


def _tokens(text):
    """The words of ``text``."""
    return text.split()


@pytest.fixture(scope="module")
def seq2seq():
    return load_example("seq2seq/seq2seq.py")


def test_bleu_of_identical_sentences_is_one(seq2seq):
    sentences = [_tokens("the cat sat on the mat"), _tokens("a b c d e f g")]
    assert seq2seq.corpus_bleu(sentences, sentences) == pytest.approx(1.0)


def test_bleu_without_a_shared_word_is_zero(seq2seq):
    assert seq2seq.corpus_bleu([_tokens("a b c d e")], [_tokens("v w x y z")]) == 0.0


def test_bleu_of_partial_matches_worked_by_hand(seq2seq):
    bleu = seq2seq.corpus_bleu
    # Last word wrong, same length: p1..p4 = 5/6, 4/5, 3/4, 2/3, whose product is 1/3.
    assert bleu([_tokens("a b c d e f")], [_tokens("a b c d e g")]) == pytest.approx(
        (1 / 3) ** 0.25
    )
    # Every n-gram right but half the length: BP = exp(1 - 10/5) = exp(-1).
    short = ([_tokens("a b c d e f g h i j")], [_tokens("a b c d e")])
    assert bleu(*short) == pytest.approx(math.exp(-1))
    # Both as one corpus: counts are pooled before dividing, c = 11, r = 16.
    pooled = bleu(
        [_tokens("a b c d e f"), _tokens("a b c d e f g h i j")],
        [_tokens("a b c d e g"), _tokens("a b c d e")],
    )
    precisions = (10 / 11) * (8 / 9) * (6 / 7) * (4 / 5)
    assert pooled == pytest.approx(math.exp(1 - 16 / 11) * precisions**0.25)
    # A repeated word counts only as often as in the reference (clipping): p1 = 1/5.
    assert bleu([[1, 2, 3, 4, 5]], [[1, 1, 1, 1, 1]], max_n=1) == pytest.approx(0.2)


def test_seq2seq_smoke_on_reversed_ptb_sentences(seq2seq, shared_dataset_root, tmp_path):
    require_files(shared_dataset_root, "ptb/ptb.train.txt", "ptb/ptb.valid.txt")
    bleu = seq2seq.main(["--test", "--epoch", "1", "--out", str(tmp_path)])
    assert 0.0 <= bleu <= 1.0
    assert (tmp_path / "log").exists()

    model = seq2seq.Seq2seq(1, 10, 10, 8)
    sources = [numpy.array([2, 3, 4], numpy.int32), numpy.array([5, 6], numpy.int32)]
    translations = model.translate(sources, max_length=7)
    assert len(translations) == 2
    for tokens in translations:
        assert tokens.dtype == numpy.int32 and tokens.ndim == 1 and len(tokens) <= 7
        assert seq2seq.EOS not in tokens.tolist()
