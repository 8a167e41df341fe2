"""Train LeNet-5 on MNIST with dbr's Trainer.

The classic convolutional network: a 5x5 convolution to 6 maps (padded, as
LeNet-5 saw 32x32 digits), 2x2 max pooling, a 5x5 convolution to 16 maps, 2x2
max pooling, then fully connected layers of 120, 84 and 10 units. ReLU rather
than the original sigmoid, standardized pixels, and Adam whose step size decays
linearly to zero over the run let one epoch reach about 99% test accuracy.
The run prints PrintReport's table each epoch, evaluates on the 10,000 test
digits, snapshots the trainer every epoch and the model at the end, and returns
the model's final test accuracy.

MNIST is downloaded on first use, or read from ``DBR_DATASET_MIRROR`` /
``DBR_DATASET_ROOT`` (see :mod:`dbr.datasets.download`).

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/convnet/train_lenet.py [--epoch 1] [--batchsize 32] [--out result/lenet]``;
``--test`` trains on a tiny slice for a smoke test.
"""

import argparse
import os
import sys

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, no_backprop_mode, using_config
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, TupleDataset, concat_examples, get_mnist
from dbr.training import StandardUpdater, Trainer, extensions, optimizers

# The examples' shared helpers are one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _report import extend_report  # noqa: E402

# Mean and standard deviation of MNIST's training pixels in [0, 1].
PIXEL_MEAN, PIXEL_STD = 0.1307, 0.3081


def standardized(dataset):
    """``dataset`` of (image, label) with the images shifted and scaled by MNIST's statistics."""
    images, labels = concat_examples(dataset)
    return TupleDataset((images - PIXEL_MEAN) / PIXEL_STD, labels)


class LeNet5(Chain):
    """LeNet-5 with ReLU: conv(1->6, 5x5)-pool-conv(6->16, 5x5)-pool-linear 120-84-10."""

    def __init__(self, n_out=10):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Convolution2D(1, 6, 5, pad=2)
            self.conv2 = L.Convolution2D(6, 16, 5)
            self.fc3 = L.Linear(None, 120)
            self.fc4 = L.Linear(120, 84)
            self.fc5 = L.Linear(84, n_out)

    def forward(self, x):
        """Class scores of shape (batch, n_out) for images of shape (batch, 1, 28, 28)."""
        h = F.max_pooling_2d(F.relu(self.conv1(x)), 2, 2)
        h = F.max_pooling_2d(F.relu(self.conv2(h)), 2, 2)
        h = F.relu(self.fc3(h))
        h = F.relu(self.fc4(h))
        return self.fc5(h)


def test_accuracy(predictor, dataset, device, batchsize=1000):
    """Accuracy of ``predictor`` on ``dataset``, in test mode and without recording a graph."""
    correct = 0
    with using_config("train", False), no_backprop_mode():
        for start in range(0, len(dataset), batchsize):
            x, t = concat_examples(dataset[start : start + batchsize], device)
            y = predictor(x).array
            correct += int((y.argmax(axis=1) == t).sum())
    return correct / len(dataset)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epoch", type=int, default=1, help="number of sweeps over the data")
    parser.add_argument("--batchsize", type=int, default=32)
    parser.add_argument(
        "--learnrate", type=float, default=2e-3, help="Adam's initial alpha, decayed to 0"
    )
    parser.add_argument("--device", default="@numpy", help="device specifier, such as @numpy")
    parser.add_argument("--out", default="result/lenet", help="output folder")
    parser.add_argument("--resume", help="trainer snapshot to resume from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--test", action="store_true", help="smoke test: 512 training and 256 test digits"
    )
    args = parser.parse_args(argv)

    numpy.random.seed(args.seed)
    train, test = get_mnist(ndim=3)
    if args.test:
        train, test = train[:512], test[:256]
    train, test = standardized(train), standardized(test)
    model = L.Classifier(LeNet5())
    model.to_device(args.device)
    optimizer = optimizers.Adam(alpha=args.learnrate).setup(model)

    train_iter = SerialIterator(train, args.batchsize)
    test_iter = SerialIterator(test, 1000, repeat=False, shuffle=False)
    updater = StandardUpdater(train_iter, optimizer, device=args.device)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, model, device=args.device))
    n_iterations = args.epoch * (len(train) // args.batchsize)
    trainer.extend(extensions.LinearShift("alpha", (args.learnrate, 0.0), (0, n_iterations)))
    trainer.extend(extensions.LogReport())
    trainer.extend(extensions.snapshot(), trigger=(1, "epoch"))
    trainer.extend(
        extensions.snapshot_object(model.predictor, "model_final"), trigger=(args.epoch, "epoch")
    )
    extend_report(trainer)
    if args.resume:
        load_npz(args.resume, trainer)
    trainer.run()

    accuracy = test_accuracy(model.predictor, test, args.device)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
