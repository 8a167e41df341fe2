"""Generate text with a language model trained by ``train_ptb.py``.

The model is read from its npz file (its sizes are read from the arrays in
it) and the vocabulary from ``vocab.json`` beside it. Starting from a primer
word, each next word is drawn from the model's softmax at temperature
``--sample``, or is the most likely word when ``--sample`` is 0 or less.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/ptb/gentxt.py --model result/ptb/rnnlm.npz --primetext the --length 20``.
"""

import argparse
import json
import pathlib
import sys

import numpy

from dbr.core import backend, no_backprop_mode, using_config
from dbr.core.serializers import load_npz

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from train_ptb import RNNLM  # noqa: E402


def load_model(path):
    """An :class:`RNNLM` with the sizes and parameters stored in the npz file ``path``."""
    with numpy.load(path) as arrays:
        n_vocab, n_units = arrays["embed/W"].shape
        n_layers = sum(1 for name in arrays.files if name.endswith("/lateral/W"))
    model = RNNLM(n_vocab, n_units, n_layers)
    load_npz(path, model)
    return model


def next_word(scores, temperature, rng):
    """The id drawn from ``softmax(scores / temperature)``, or the argmax when it is <= 0."""
    scores = numpy.asarray(scores, dtype=numpy.float64).ravel()
    if temperature <= 0:
        return int(scores.argmax())
    logits = scores / temperature
    probability = numpy.exp(logits - logits.max())
    return int(rng.choice(len(probability), p=probability / probability.sum()))


def generate(model, primer_ids, length, temperature=1.0, seed=0, device="@numpy"):
    """Feed ``primer_ids`` to ``model`` and return the ids of the ``length`` words that follow.

    Args:
        model (RNNLM): the language model on ``device`` (its state is reset first).
        primer_ids (list of int): the words that start the text, at least one.
        length (int): the number of words to generate.
        temperature (float): the softmax temperature; 0 or less picks the argmax.
        seed (int): the seed of the sampling.
        device: the device specifier of the model.
    """
    device = backend.get_device(device)
    rng = numpy.random.default_rng(seed)
    model.reset_state()
    generated = []
    with using_config("train", False), no_backprop_mode():
        for word in primer_ids:
            scores = model(device.send(numpy.array([word], numpy.int32)))
        for _ in range(length):
            word = next_word(backend.to_cpu(scores.array), temperature, rng)
            generated.append(word)
            scores = model(device.send(numpy.array([word], numpy.int32)))
    return generated


def main(argv=None):
    """Print the primer and the generated words; returns the generated words."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", "-m", default="result/ptb/rnnlm.npz", help="trained model")
    parser.add_argument(
        "--vocab", default=None, help="vocabulary JSON (default: vocab.json beside the model)"
    )
    parser.add_argument("--primetext", "-p", default="the", help="the words to start from")
    parser.add_argument("--length", "-l", type=int, default=20, help="words to generate")
    parser.add_argument(
        "--sample", type=float, default=1.0, help="softmax temperature; 0 or less: argmax"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    args = parser.parse_args(argv)

    vocab_path = pathlib.Path(args.vocab or pathlib.Path(args.model).parent / "vocab.json")
    words = json.loads(vocab_path.read_text())
    ids = {word: i for i, word in enumerate(words)}
    primer = args.primetext.split()
    unknown = [word for word in primer if word not in ids]
    if not primer or unknown:
        parser.error(f"the primer must be words of the vocabulary; unknown: {unknown}")

    model = load_model(args.model)
    model.to_device(args.device)
    generated = [
        words[i]
        for i in generate(
            model, [ids[w] for w in primer], args.length, args.sample, args.seed, args.device
        )
    ]
    print(" ".join(primer + generated))
    return generated


if __name__ == "__main__":
    main()
