"""Train a multi-layer perceptron on MNIST with dbr's Trainer (Chainer's train_mnist).

The network is 784 - unit - unit - 10 with ReLU (``--unit``, 1000 by default),
wrapped in ``L.Classifier`` and trained with Adam. The Trainer evaluates on
the 10,000 test images each epoch, logs and prints loss and accuracy, draws
``loss.png`` and ``accuracy.png``, shows a progress bar and snapshots itself,
so that ``--resume`` (or ``--autoload``) continues an interrupted run.

MNIST is read through dbr-datasets' ``get_mnist`` (downloaded, or read from
DBR_DATASET_ROOT / DBR_DATASET_MIRROR).

Install: ``pip install dbr-links dbr-datasets "dbr-training[plot]"``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/mnist/train_mnist.py [--epoch 20] [--unit 1000] [--out result/mnist]``.
"""

import argparse
import os
import sys

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, get_mnist
from dbr.training import StandardUpdater, Trainer, extensions, optimizers

# The examples' shared helpers are one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _report import extend_classifier_plots, extend_report  # noqa: E402


class MLP(Chain):
    """Three fully connected layers: n_in - n_units - n_units - n_out, ReLU between them."""

    def __init__(self, n_units, n_out):
        super().__init__()
        with self.init_scope():
            # The input size is inferred from the first batch.
            self.l1 = L.Linear(None, n_units)
            self.l2 = L.Linear(None, n_units)
            self.l3 = L.Linear(None, n_out)

    def forward(self, x):
        """Class scores of shape (batch, n_out) for inputs of shape (batch, n_in)."""
        h1 = F.relu(self.l1(x))
        h2 = F.relu(self.l2(h1))
        return self.l3(h2)


def setup_model_and_data(args):
    """The Classifier of an MLP on ``args.device`` with its Adam optimizer, and MNIST.

    ``numpy.random`` is seeded with ``args.seed`` first; with ``args.test``,
    only the first 500 training and 200 test images are kept.

    Returns:
        tuple: ``(model, optimizer, train, test)``.
    """
    numpy.random.seed(args.seed)
    model = L.Classifier(MLP(args.unit, 10))
    model.to_device(args.device)
    optimizer = optimizers.Adam().setup(model)
    train, test = get_mnist()
    if args.test:
        train, test = train[:500], test[:200]
    return model, optimizer, train, test


def main(argv=None):
    """Train the MLP; return the last epoch's validation accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batchsize", "-b", type=int, default=100, help="examples per update")
    parser.add_argument(
        "--epoch", "-e", type=int, default=20, help="number of sweeps over the data"
    )
    parser.add_argument(
        "--frequency",
        "-f",
        type=int,
        default=-1,
        help="snapshot every this many epochs (-1: at the end)",
    )
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/mnist", help="output folder")
    parser.add_argument("--resume", "-r", default=None, help="trainer snapshot to continue from")
    parser.add_argument(
        "--autoload", action="store_true", help="continue from the newest snapshot in --out"
    )
    parser.add_argument("--unit", "-u", type=int, default=1000, help="units per hidden layer")
    parser.add_argument(
        "--noplot", action="store_true", help="do not draw loss.png / accuracy.png"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of numpy.random")
    parser.add_argument(
        "--test", action="store_true", help="use a small slice of MNIST (smoke test)"
    )
    args = parser.parse_args(argv)

    print(f"Device: {args.device}")
    print(f"# unit: {args.unit}")
    print(f"# Minibatch-size: {args.batchsize}")
    print(f"# epoch: {args.epoch}")

    model, optimizer, train, test = setup_model_and_data(args)
    train_iter = SerialIterator(train, args.batchsize)
    test_iter = SerialIterator(test, args.batchsize, repeat=False, shuffle=False)

    updater = StandardUpdater(train_iter, optimizer, device=args.device)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, model, device=args.device))

    frequency = args.epoch if args.frequency == -1 else max(1, args.frequency)
    trainer.extend(
        extensions.snapshot(n_retains=1, autoload=args.autoload), trigger=(frequency, "epoch")
    )
    log_report = extensions.LogReport()
    trainer.extend(log_report)
    if not args.noplot:
        extend_classifier_plots(trainer)
    extend_report(trainer, update_interval=100)
    if args.resume is not None:
        load_npz(args.resume, trainer)
    trainer.run()

    accuracy = float(log_report.log[-1]["validation/main/accuracy"])
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
