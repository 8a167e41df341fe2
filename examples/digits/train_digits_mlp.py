"""Train a multi-layer perceptron on scikit-learn's handwritten digits with dbr's Trainer.

No network is needed: the 1,797 8x8 digits ship with scikit-learn. The run
prints a progress bar and PrintReport's table each epoch, evaluates on the
held-out 360 digits, snapshots the trainer, and at the end reloads the model
from its snapshot and prints its test accuracy.

Run: ``python examples/digits/train_digits_mlp.py [--epoch 20] [--out result/digits]``.
"""

import argparse
import sys

import numpy

import dbr.functions as F
from dbr.core import Chain, Parameter, initializers, report
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, concat_examples, get_digits
from dbr.training import StandardUpdater, Trainer, extensions, optimizers


class MLP(Chain):
    """64 -> n_units -> n_units -> 10 with ReLU, as two hidden affine layers and a classifier."""

    def __init__(self, n_units, sizes=(64, None, None, 10)):
        super().__init__()
        sizes = [n if n is not None else n_units for n in sizes]
        self.n_layers = len(sizes) - 1
        with self.init_scope():
            for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
                setattr(self, f"W{i}", Parameter(initializers.LeCunNormal(), (n_out, n_in)))
                setattr(self, f"b{i}", Parameter(0.0, (n_out,)))

    def predict(self, x):
        """Class scores of shape (batch, 10) for images of shape (batch, 64)."""
        h = x
        for i in range(self.n_layers):
            h = F.linear(h, getattr(self, f"W{i}"), getattr(self, f"b{i}"))
            if i < self.n_layers - 1:
                h = F.relu(h)
        return h

    def forward(self, x, t):
        """Softmax cross entropy of the scores against labels ``t``; reports loss and accuracy."""
        y = self.predict(x)
        loss = F.softmax_cross_entropy(y, t)
        report({"loss": loss, "accuracy": F.accuracy(y, t)}, self)
        return loss


def test_accuracy(model, dataset, batchsize=500):
    """Accuracy of ``model`` on ``dataset``, computed without recording a graph."""
    correct = 0
    for start in range(0, len(dataset), batchsize):
        x, t = concat_examples(dataset[start : start + batchsize])
        y = model.predict(x).array
        correct += int((y.argmax(axis=1) == t).sum())
    return correct / len(dataset)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epoch", type=int, default=20, help="number of sweeps over the data")
    parser.add_argument("--batchsize", type=int, default=32)
    parser.add_argument("--unit", type=int, default=128, help="units per hidden layer")
    parser.add_argument("--out", default="result/digits", help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    numpy.random.seed(args.seed)
    train, test = get_digits(scale=1.0)
    model = MLP(args.unit)
    optimizer = optimizers.Adam().setup(model)
    train_iter = SerialIterator(train, args.batchsize)
    test_iter = SerialIterator(test, 360, repeat=False, shuffle=False)
    trainer = Trainer(StandardUpdater(train_iter, optimizer), (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, model))
    trainer.extend(extensions.LogReport())
    trainer.extend(extensions.snapshot_object(model, "model_final"), trigger=(args.epoch, "epoch"))
    trainer.extend(
        extensions.PrintReport(
            ["epoch", "main/loss", "main/accuracy", "validation/main/accuracy", "elapsed_time"]
        )
    )
    trainer.extend(extensions.ProgressBar(update_interval=10))
    trainer.run()

    reloaded = MLP(args.unit)
    load_npz(f"{args.out}/model_final", reloaded)
    accuracy = test_accuracy(reloaded, test)
    print(f"test accuracy of the model reloaded from {args.out}/model_final: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    sys.exit(0 if main() >= 0.9 else 1)
