"""Train a character-level LSTM language model on a text and sample new text from it.

By default the text is Tiny Shakespeare (``../shared/datasets/tinyshakespeare/input.txt``
relative to the repository); any UTF-8 text works with ``--text``. Its last
tenth is held out for validation. The model, iterator and truncated-BPTT
updater are those of the PTB example (``examples/ptb/train_ptb.py``), over
characters instead of words, trained with Adam. The log reports the
per-character perplexity; at the end ``--length`` characters are sampled
after ``--primetext`` and written to ``<out>/sample.txt``.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/char_rnn/train_char_rnn.py [--epoch 5] [--out result/char_rnn]``.
"""

import argparse
import json
import pathlib
import sys

import numpy

import dbr.links as L
from dbr.core.serializers import save_npz
from dbr.training import optimizers

_EXAMPLES = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_EXAMPLES / "ptb"))
from gentxt import generate  # noqa: E402
from train_ptb import RNNLM, build_trainer  # noqa: E402

DEFAULT_TEXT = _EXAMPLES.parents[1] / "shared" / "datasets" / "tinyshakespeare" / "input.txt"


def main(argv=None):
    """Train, sample and save; returns the last validation perplexity per character."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default=str(DEFAULT_TEXT), help="the training text (UTF-8)")
    parser.add_argument("--batchsize", "-b", type=int, default=50, help="parallel streams")
    parser.add_argument("--bproplen", "-l", type=int, default=50, help="steps of truncated BPTT")
    parser.add_argument("--epoch", "-e", type=int, default=5, help="sweeps over the text")
    parser.add_argument("--unit", "-u", type=int, default=128, help="units per LSTM layer")
    parser.add_argument("--layers", type=int, default=2, help="number of stacked LSTMs")
    parser.add_argument("--dropout", type=float, default=0.0, help="dropout ratio")
    parser.add_argument("--gradclip", "-c", type=float, default=5.0, help="gradient norm bound")
    parser.add_argument("--primetext", "-p", default="ROMEO:", help="the text to start from")
    parser.add_argument("--length", type=int, default=500, help="characters to sample")
    parser.add_argument(
        "--sample", type=float, default=0.8, help="softmax temperature; 0 or less: argmax"
    )
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/char_rnn", help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--test", action="store_true", help="smoke test: 3,000 characters, a tiny model, one epoch"
    )
    args = parser.parse_args(argv)

    text_path = pathlib.Path(args.text)
    if not text_path.is_file():
        parser.error(f"no text at {text_path} (give one with --text)")
    text = text_path.read_text(encoding="utf-8")
    chars = sorted(set(text))
    ids = {char: i for i, char in enumerate(chars)}
    unknown = sorted(set(args.primetext) - set(ids))
    if not args.primetext or unknown:
        parser.error(f"the primer must be characters of the text; unknown: {unknown}")
    if args.test:
        text = text[:3000]
        args.batchsize, args.bproplen, args.unit = 10, 20, min(args.unit, 32)
        args.epoch = min(args.epoch, 1)
    encoded = numpy.array([ids[char] for char in text], numpy.int32)
    split = len(encoded) * 9 // 10
    train, val = encoded[:split], encoded[split:]
    print(f"# {len(train)} training characters, {len(val)} held out, {len(chars)} distinct")

    numpy.random.seed(args.seed)
    model = L.Classifier(RNNLM(len(chars), args.unit, args.layers, args.dropout))
    model.compute_accuracy = False
    model.to_device(args.device)
    optimizer = optimizers.Adam(alpha=2e-3).setup(model)
    trainer, _, log = build_trainer(
        model, optimizer, train, val, args, args.batchsize, 5 if args.test else 50
    )
    trainer.run()

    out = pathlib.Path(args.out)
    save_npz(out / "char_rnn.npz", model.predictor)
    (out / "chars.json").write_text(json.dumps(chars))
    sampled = generate(
        model.predictor,
        [ids[char] for char in args.primetext],
        args.length,
        args.sample,
        args.seed,
        args.device,
    )
    sample = "".join(chars[i] for i in sampled)
    (out / "sample.txt").write_text(sample, encoding="utf-8")
    print(args.primetext + sample)
    return float(log.log[-1]["val_perplexity"])


if __name__ == "__main__":
    main()
