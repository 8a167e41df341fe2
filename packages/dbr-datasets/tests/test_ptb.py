import os

import numpy
import pytest

from dbr.datasets import download
from dbr.datasets.ptb import get_ptb_words, get_ptb_words_vocabulary

SPLITS = {
    "train": ("ptb.train.txt", 887521, 42068),
    "valid": ("ptb.valid.txt", 70390, 3370),
    "test": ("ptb.test.txt", 78669, 3761),
}


@pytest.fixture(scope="module")
def ptb(shared_dataset_server):
    return dict(zip(("train", "valid", "test"), get_ptb_words()))


@pytest.fixture(scope="module")
def texts(shared_dataset_server):
    directory = shared_dataset_server.directory / "ptb"
    return {split: (directory / name).read_text() for split, (name, _, _) in SPLITS.items()}


def test_vocabulary(ptb):
    vocabulary = get_ptb_words_vocabulary()
    assert len(vocabulary) == 10000
    assert sorted(vocabulary.values()) == list(range(10000))
    assert "<eos>" in vocabulary and "<unk>" in vocabulary


def test_token_and_eos_counts(ptb):
    eos = get_ptb_words_vocabulary()["<eos>"]
    for split, (_, tokens, lines) in SPLITS.items():
        words = ptb[split]
        assert words.dtype == numpy.int32 and words.ndim == 1
        assert len(words) == tokens + lines
        assert numpy.count_nonzero(words == eos) == lines
        assert words.min() >= 0 and words.max() < 10000


def test_equal_to_an_independent_parse(ptb, texts):
    sequences = {
        split: " <eos> ".join(line.strip() for line in text.splitlines()).split() + ["<eos>"]
        for split, text in texts.items()
    }
    ids = {word: i for i, word in enumerate(dict.fromkeys(sequences["train"]))}
    assert get_ptb_words_vocabulary() == ids
    for split, words in sequences.items():
        numpy.testing.assert_array_equal(ptb[split], [ids[word] for word in words])


def test_parsed_once_into_an_npz(ptb, shared_dataset_server):
    directory = os.path.join(download.get_dataset_root(), "ptb")
    assert {"ptb.train.txt", "ptb.valid.txt", "ptb.test.txt", "ptb_words.npz"} <= set(
        os.listdir(directory)
    )
    requests = shared_dataset_server.requests
    assert sorted(requests) == ["/ptb/ptb.test.txt", "/ptb/ptb.train.txt", "/ptb/ptb.valid.txt"]
    get_ptb_words()
    assert shared_dataset_server.requests == requests
