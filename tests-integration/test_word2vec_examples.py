"""The word2vec example: smoke tests of its output layers and search, and a POS check on PTB."""

import io
import math

import numpy
import pytest
from conftest import load_example, require_files

PTB_FILES = ("ptb/ptb.train.txt", "ptb/ptb.valid.txt", "ptb/ptb.test.txt")

# Frequent PTB words of one clear part of speech, in the Penn Treebank's own
# tags: DT determiners, PRP personal pronouns, IN prepositions, MD modals, CD
# number words, NNP month and weekday names (proper nouns in PTB's tagging),
# NN common nouns (singular or plural), VBD past-tense verbs. Words used as two parts of speech
# (``may``, ``one``, ``that``, ``after``, ``all``) are left out.
WORDS_BY_TAG = {
    "DT": ("the", "a", "an", "this", "these", "those", "each", "every", "another"),
    "PRP": ("he", "she", "they", "we", "i", "it", "you", "him", "them", "us"),
    "IN": (
        *("of", "in", "for", "on", "with", "at", "by", "from", "into", "about"),
        *("under", "between", "during", "through", "against"),
    ),
    "MD": ("will", "would", "could", "should", "can", "might", "must"),
    "CD": ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    "NNP": (
        *("january", "february", "march", "april", "june", "july", "august", "september"),
        *("october", "november", "december", "monday", "tuesday", "wednesday", "thursday"),
        "friday",
    ),
    "NN": (
        *("company", "market", "stock", "government", "bank", "president", "business"),
        *("money", "program", "industry", "shares", "investors", "prices", "sales"),
        "companies",
    ),
    "VBD": ("said", "reported", "rose", "fell", "added", "bought", "sold", "agreed", "declined"),
}
PART_OF_SPEECH = {word: tag for tag, words in WORDS_BY_TAG.items() for word in words}


@pytest.fixture
def ptb(shared_dataset_root):
    require_files(shared_dataset_root, *PTB_FILES)


@pytest.mark.parametrize("out_type", ["ns", "hsm"])
def test_word2vec_trains_a_few_iterations_and_search_finds_neighbours(
    ptb, tmp_path, monkeypatch, out_type
):
    train = load_example("word2vec/train_word2vec.py")
    loss = train.main(
        ["--test", "--epoch", "1", "--batchsize", "100", "--out-type", out_type]
        + ["--out", str(tmp_path)]
    )
    assert math.isfinite(loss) and loss > 0
    W = numpy.load(tmp_path / "embeddings.npz")["W"]
    words = (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert W.shape == (10000, 100) and len(words) == 10000
    assert numpy.isfinite(W).all()

    search = load_example("word2vec/search.py")
    found = search.main(["--dir", str(tmp_path), "--query", "the", "--top", "3"])
    neighbours = found["the"]
    assert len(neighbours) == 3
    assert all(word in words and word != "the" for word, _ in neighbours)
    similarities = [s for _, s in neighbours]
    assert similarities == sorted(similarities, reverse=True)
    assert all(-1.0 - 1e-9 <= s <= 1.0 + 1e-9 for s in similarities)
    assert search.main(["--dir", str(tmp_path), "--query", "no-such-word"]) == {
        "no-such-word": None
    }
    monkeypatch.setattr("sys.stdin", io.StringIO("money\nno-such-word\n\n"))
    interactive = search.main(["--dir", str(tmp_path)])
    assert len(interactive["money"]) == 5 and interactive["no-such-word"] is None


def test_word2vec_original_softmax_runs(ptb, tmp_path):
    loss = load_example("word2vec/train_word2vec.py").main(
        ["--test", "--epoch", "1", "--batchsize", "300", "--model", "cbow"]
        + ["--out-type", "original", "--out", str(tmp_path)]
    )
    # Zero output weights give a uniform softmax over 10,000 words: log(10000) = 9.21.
    assert math.isfinite(loss) and 0 < loss < 9.3


def same_pos_rates(W, words, labels, k=5):
    """For each labelled word, the fraction of its ``k`` nearest labelled words sharing its label.

    Neighbours are ranked by cosine similarity among the labelled words only.
    Returns ``(rates by word, chance)``, where chance is the larger of the
    most common label's frequency and the mean same-label rate of neighbours
    drawn at random from the other labelled words.
    """
    index = {w: i for i, w in enumerate(words)}
    query = [w for w in labels if w in index]
    vectors = W[[index[w] for w in query]].astype(numpy.float64)
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = vectors @ vectors.T
    numpy.fill_diagonal(similarity, -numpy.inf)
    tags = numpy.array([labels[w] for w in query])
    nearest = numpy.argsort(-similarity, axis=1)[:, :k]
    rates = {w: float((tags[nearest[i]] == tags[i]).mean()) for i, w in enumerate(query)}

    n = len(query)
    sizes = numpy.array([(tags == t).sum() for t in set(tags.tolist())])
    random_neighbours = float((sizes * (sizes - 1)).sum() / (n * (n - 1)))
    majority = float(sizes.max() / n)
    return rates, max(random_neighbours, majority)


def test_word2vec_neighbours_share_their_part_of_speech(ptb, tmp_path, report_figure):
    # One epoch of CBoW with negative sampling over the 930k PTB training words.
    load_example("word2vec/train_word2vec.py").main(
        ["--model", "cbow", "--out-type", "ns", "--epoch", "1", "--out", str(tmp_path)]
    )
    W = numpy.load(tmp_path / "embeddings.npz")["W"]
    words = (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    rates, chance = same_pos_rates(W, words, PART_OF_SPEECH)
    assert len(rates) >= 90
    same_pos = sum(rates.values()) / len(rates)
    report_figure("word2vec PTB: same-POS rate among 5 nearest labelled words", same_pos)
    report_figure("word2vec PTB: chance same-POS rate", chance)
    # Chance is 16/90 = 0.18 here (NNP, the most common tag); random neighbours
    # share a tag at 0.13. Shuffling the tags over these words, the measured
    # rate has a standard deviation near 0.02 (0.13 +- 0.018 over 200
    # shuffles, never above 0.18), so a margin of 0.25 is over ten deviations
    # above chance, and one epoch measures 0.55 (skip-gram 0.60).
    assert same_pos > chance + 0.25
