"""Train a small convolutional network on handwritten digits with dbr's Trainer.

By default the data are the 1,797 8x8 digits that scikit-learn ships (no
network needed); ``--dataset mnist`` or ``--dataset fashion-mnist`` use the
28x28 images through dbr-datasets' loaders (downloaded, or read from
DBR_DATASET_ROOT / DBR_DATASET_MIRROR). The network is two 3x3 convolutions, a
2x2 max pooling and two fully connected layers with dropout, wrapped in
``L.Classifier`` and trained with Adam on training images shifted at random by
up to one pixel. Each epoch the run prints a progress bar and PrintReport's
table, evaluates on the test split, plots loss and accuracy (``loss.png``,
``accuracy.png``), and snapshots the trainer (for ``--resume``) and the model.
At the end the model is reloaded from its snapshot file and its test accuracy
printed (at least 97% on the digits' 360 test images with the defaults).

Install: ``pip install dbr-links "dbr-datasets[sklearn]" "dbr-training[plot]"``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/digits/train_digits_cnn.py [--epoch 20] [--out result/digits]``;
continue a run with ``--resume result/digits/snapshot_epoch_5``.
"""

import argparse
import os
import sys

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, no_backprop_mode, using_config
from dbr.core.serializers import Deserializer, load_npz
from dbr.datasets import (
    SerialIterator,
    TransformDataset,
    concat_examples,
    get_digits,
    get_fashion_mnist,
    get_mnist,
)
from dbr.training import StandardUpdater, Trainer, extensions, optimizers
from dbr.training.extension import Extension

# The examples' shared helpers are one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _report import extend_classifier_plots, extend_report  # noqa: E402

DEFAULT_EPOCHS = {"digits": 20, "mnist": 2, "fashion-mnist": 2}


class CNN(Chain):
    """conv 3x3 (32) - conv 3x3 (64) - max pool 2 - linear (n_hidden) - dropout - linear."""

    def __init__(self, n_out=10, n_hidden=128, dropout_ratio=0.3):
        super().__init__()
        self.dropout_ratio = dropout_ratio
        with self.init_scope():
            self.conv1 = L.Convolution2D(None, 32, 3, pad=1)
            self.conv2 = L.Convolution2D(32, 64, 3, pad=1)
            self.fc3 = L.Linear(None, n_hidden)
            self.fc4 = L.Linear(n_hidden, n_out)

    def forward(self, x):
        """Class scores of shape (batch, n_out) for images of shape (batch, 1, H, W)."""
        h = F.relu(self.conv1(x))
        h = F.max_pooling_2d(F.relu(self.conv2(h)), 2)
        h = F.dropout(F.relu(self.fc3(h)), self.dropout_ratio)
        return self.fc4(h)


def random_shift(example):
    """Shift the image of ``(image, label)`` by -1, 0 or 1 pixel along each axis, zero-filled."""
    image, label = example
    dy, dx = numpy.random.randint(-1, 2, size=2)
    _, height, width = image.shape
    padded = numpy.pad(image, ((0, 0), (1, 1), (1, 1)))
    return padded[:, 1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width], label


class NumpyRandomState(Extension):
    """Keeps NumPy's global random state in trainer snapshots; does nothing when called.

    Shuffling, dropout and the random shifts all draw from ``numpy.random``;
    restoring its state with the rest of the trainer makes a resumed run
    repeat exactly the run it continues.
    """

    trigger = 1, "epoch"

    def __call__(self, trainer):
        """Nothing to do during training."""

    def serialize(self, serializer):
        """Save or load the state of NumPy's global generator (MT19937)."""
        kind, key, pos, has_gauss, cached_gaussian = numpy.random.get_state()
        key = serializer("key", key)
        pos = serializer("pos", pos)
        has_gauss = serializer("has_gauss", has_gauss)
        cached_gaussian = serializer("cached_gaussian", cached_gaussian)
        if isinstance(serializer, Deserializer) and not getattr(serializer, "dry_run", False):
            numpy.random.set_state((kind, key, int(pos), int(has_gauss), float(cached_gaussian)))


def load_dataset(name):
    """``(train, test)`` of (image of shape (1, H, W), label) pairs, pixels in [0, 1]."""
    if name == "digits":
        return get_digits(ndim=3)
    loader = {"mnist": get_mnist, "fashion-mnist": get_fashion_mnist}[name]
    return loader(ndim=3)


def evaluate_accuracy(model, dataset, device, batchsize=500):
    """Accuracy of the predictor ``model`` on ``dataset``, in test mode and without a graph."""
    correct = 0
    with using_config("train", False), no_backprop_mode():
        for start in range(0, len(dataset), batchsize):
            x, t = concat_examples(dataset[start : start + batchsize], device)
            y = model(x)
            correct += float(F.accuracy(y, t).array) * len(t)
    return correct / len(dataset)


def main(argv=None):
    """Train, reload the model from its snapshot, print and return its test accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(DEFAULT_EPOCHS), default="digits")
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument(
        "--epoch",
        "-e",
        type=int,
        default=None,
        help="number of sweeps over the data (20 for digits, 2 for the 28x28 sets)",
    )
    parser.add_argument("--batchsize", "-b", type=int, default=32)
    parser.add_argument("--out", "-o", default="result/digits", help="output folder")
    parser.add_argument("--resume", "-r", default=None, help="trainer snapshot to continue from")
    parser.add_argument("--seed", type=int, default=0, help="seed of numpy.random")
    parser.add_argument(
        "--test", action="store_true", help="use a small slice of the data (smoke test)"
    )
    args = parser.parse_args(argv)
    epochs = args.epoch if args.epoch is not None else DEFAULT_EPOCHS[args.dataset]

    numpy.random.seed(args.seed)
    train, test = load_dataset(args.dataset)
    if args.test:
        train, test = train[:256], test[:100]
    print(f"dataset: {args.dataset}, {len(train)} training and {len(test)} test images")

    model = L.Classifier(CNN())
    model.to_device(args.device)
    optimizer = optimizers.Adam().setup(model)
    train_iter = SerialIterator(TransformDataset(train, random_shift), args.batchsize)
    test_iter = SerialIterator(test, 500, repeat=False, shuffle=False)
    updater = StandardUpdater(train_iter, optimizer, device=args.device)
    trainer = Trainer(updater, (epochs, "epoch"), out=args.out)

    trainer.extend(extensions.Evaluator(test_iter, model, device=args.device))
    trainer.extend(extensions.LogReport())
    trainer.extend(NumpyRandomState())
    trainer.extend(extensions.snapshot(filename="snapshot_epoch_{.updater.epoch}", n_retains=5))
    trainer.extend(extensions.snapshot_object(model.predictor, "model.npz"))
    extend_classifier_plots(trainer)
    extend_report(trainer)
    if args.resume:
        load_npz(args.resume, trainer)
    trainer.run()

    model_file = os.path.join(args.out, "model.npz")
    reloaded = CNN()
    load_npz(model_file, reloaded)
    reloaded.to_device(args.device)
    accuracy = evaluate_accuracy(reloaded, test, args.device)
    print(f"test accuracy of the model reloaded from {model_file}: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
